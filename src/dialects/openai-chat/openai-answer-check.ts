import { parseJson } from '../../framing/parse-json.ts';
import { usageFromOpenAIText } from './openai-usage-from-text.ts';
import { usageFromOpenAIWire } from './openai-usage-from-wire.ts';
import type { NativeAnswerCheck } from '../dialect.ts';
import { unusableAnswer } from '../native-answer-check.ts';

/** What {@link checkOpenAIAnswer} found in an upstream's OpenAI-shaped answer. */
export type OpenAIAnswerCheck = NativeAnswerCheck;

/**
 * Answers up to this size are parsed whole (V8's parser is faster than any scan written in JavaScript, and the check
 * is then exact); larger ones (embeddings of big batches, audio) get the structural checks only, so a 60 MB answer
 * costs microseconds, not a parse.
 */
const wholeParseLimit = 256 * 1024;

function isWhitespace(code: number): boolean {
  return code === 32 || code === 10 || code === 13 || code === 9;
}

/** An error object as upstreams send it: `{"error": ...}` (OpenAI and most), or `{"object": "error", ...}` (vLLM). */
const leadingError = /^\s*\{\s*"(?:error"\s*:\s*(?!null)|object"\s*:\s*"error")/;

/** The checks that need no parse: one object from the first byte to the last, not an error object. */
function checkStructure(text: string): OpenAIAnswerCheck {
  let start = 0;
  while (start < text.length && isWhitespace(text.charCodeAt(start))) start++;
  if (start === text.length) return { ok: false, reason: 'the body is empty' };
  if (text.charCodeAt(start) !== 123 /* { */) return { ok: false, reason: 'the body is not a JSON object' };
  let end = text.length - 1;
  while (end > start && isWhitespace(text.charCodeAt(end))) end--;
  if (text.charCodeAt(end) !== 125 /* } */) return { ok: false, reason: 'the JSON is cut off' };
  if (leadingError.test(text.slice(start, start + 200))) {
    const parsed = parseJson(text);
    return unusableAnswer(
      'the body is an error object',
      parsed.ok ? (parsed.value as Record<string, unknown>).error : undefined,
    );
  }
  return { ok: true, usage: usageFromOpenAIText(text) };
}

/**
 * Checks an upstream's answer to a same-dialect (pass-through) request before its bytes go to the client unchanged,
 * and reads its `usage`. It must be one complete JSON object and not an error object (`{"error": ...}`, or
 * `"object": "error"` as vLLM sends): this catches what upstreams and proxies send with a 200, HTML pages, truncated
 * JSON, compressed bytes, errors inside a success. The body is never re-serialised; answers over 256 KiB are checked
 * structurally (first and last byte, a leading error key) rather than parsed.
 */
export function checkOpenAIAnswer(text: string): OpenAIAnswerCheck {
  if (text.length > wholeParseLimit) return checkStructure(text);
  const parsed = parseJson(text);
  if (!parsed.ok) {
    const structure = checkStructure(text);
    return structure.ok ? { ok: false, reason: `the JSON is malformed (${parsed.error})` } : structure;
  }
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, reason: 'the body is not a JSON object' };
  const answer = value as Record<string, unknown>;
  if ((answer.error !== undefined && answer.error !== null) || answer.object === 'error')
    return unusableAnswer('the body is an error object', answer.error ?? answer);
  return { ok: true, usage: usageFromOpenAIWire(answer.usage) };
}
