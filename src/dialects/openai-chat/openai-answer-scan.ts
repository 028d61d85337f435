import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';
import { parseJson } from '../../framing/parse-json.ts';
import { usageFromOpenAIWire } from './openai-usage-from-wire.ts';

/** What {@link scanOpenAIAnswer} found in an upstream's OpenAI-shaped answer. */
export type OpenAIAnswerScan =
  | { ok: true; usage: CanonicalUsage | undefined }
  /** Not a usable answer: `reason` says why; `errorMessage` is the upstream's own message when it sent an error. */
  | { ok: false; reason: string; errorMessage?: string };

const quote = 34;
const backslash = 92;
const openBrace = 123;
const closeBrace = 125;
const openBracket = 91;
const closeBracket = 93;
const comma = 44;

function isWhitespace(code: number): boolean {
  return code === 32 || code === 10 || code === 13 || code === 9;
}

function errorMessageOf(text: string, start: number, end: number): string | undefined {
  const parsed = parseJson(text.slice(start, end));
  if (!parsed.ok) return undefined;
  const value = parsed.value;
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) {
    const message = (value as Record<string, unknown>).message;
    if (typeof message === 'string') return message;
  }
  return undefined;
}

/**
 * Checks an upstream's answer to a same-dialect (pass-through) request before its bytes go to the client unchanged,
 * and reads its `usage`, in one pass over the text with no parse of the whole body: the structure must be one
 * complete JSON object (brackets balanced, strings closed, nothing after it), and it must not be an error object
 * (a top-level `error` key, or `"object": "error"` as vLLM sends). This catches what upstreams and proxies send
 * with a 200: HTML pages, truncated JSON, compressed bytes, errors inside a success. Only the `usage` object (and an
 * error's message) is parsed. A value that is structurally sound but not valid JSON inside (`tru`) is not caught:
 * the check guards against broken and hostile upstreams, it is not a validator.
 */
export function scanOpenAIAnswer(text: string): OpenAIAnswerScan {
  const length = text.length;
  let index = 0;
  while (index < length && isWhitespace(text.charCodeAt(index))) index++;
  if (text.charCodeAt(index) !== openBrace) {
    return { ok: false, reason: index === length ? 'the body is empty' : 'the body is not a JSON object' };
  }
  let depth = 0;
  let inString = false;
  /** At depth 1: whether the next string is a key (after `{` or `,`). */
  let expectKey = false;
  let keyStart = -1;
  let lastKey = '';
  /**
   * Start of the value of a top-level key being watched, -1 when none: the `usage` object, an `error` object or
   * string (`"error": null` is no error), the `object` string.
   */
  let watchedStart = -1;
  let usageSpan: [number, number] | undefined;
  let errorSpan: [number, number] | undefined;
  let objectIsError = false;
  for (; index < length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === backslash) index++;
      else if (code === quote) {
        inString = false;
        if (keyStart !== -1) {
          lastKey = text.slice(keyStart, index);
          keyStart = -1;
        } else if (depth === 1 && watchedStart !== -1) {
          if (lastKey === 'object') objectIsError = text.slice(watchedStart + 1, index) === 'error';
          else errorSpan = [watchedStart, index + 1];
          watchedStart = -1;
        }
      }
      continue;
    }
    if (code === quote) {
      inString = true;
      if (depth === 1 && expectKey) {
        keyStart = index + 1;
        expectKey = false;
      } else if (depth === 1 && (lastKey === 'object' || lastKey === 'error')) watchedStart = index;
    } else if (code === openBrace || code === openBracket) {
      if (depth === 1 && (lastKey === 'usage' || lastKey === 'error')) watchedStart = index;
      depth++;
      if (depth === 1) expectKey = true;
    } else if (code === closeBrace || code === closeBracket) {
      depth--;
      if (depth === 1 && watchedStart !== -1) {
        if (lastKey === 'usage') usageSpan = [watchedStart, index + 1];
        else if (lastKey === 'error') errorSpan = [watchedStart, index + 1];
        watchedStart = -1;
      }
      if (depth === 0) break;
      if (depth < 0) return { ok: false, reason: 'the JSON is malformed' };
    } else if (depth === 1 && code === comma) {
      expectKey = true;
    }
  }
  if (depth !== 0 || index >= length) return { ok: false, reason: 'the JSON is cut off' };
  for (index++; index < length; index++) {
    if (!isWhitespace(text.charCodeAt(index))) return { ok: false, reason: 'there is text after the JSON object' };
  }
  if (errorSpan !== undefined || objectIsError) {
    const message = errorSpan === undefined ? undefined : errorMessageOf(text, errorSpan[0], errorSpan[1]);
    return {
      ok: false,
      reason: 'the body is an error object',
      ...(message === undefined ? {} : { errorMessage: message }),
    };
  }
  if (usageSpan === undefined) return { ok: true, usage: undefined };
  const usage = parseJson(text.slice(usageSpan[0], usageSpan[1]));
  return { ok: true, usage: usage.ok ? usageFromOpenAIWire(usage.value) : undefined };
}
