import { parseJson } from '../../framing/parse-json.ts';
import type { NativeAnswerCheck } from '../dialect.ts';
import { usageFromResponsesWire } from './openai-responses-usage.ts';

function errorMessageOf(error: unknown): string | undefined {
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    const message = (error as Record<string, unknown>).message;
    if (typeof message === 'string') return message;
  }
  return undefined;
}

function notOk(reason: string, error: unknown): NativeAnswerCheck {
  const message = errorMessageOf(error);
  return { ok: false, reason, ...(message === undefined ? {} : { errorMessage: message }) };
}

/** Why a body that did not parse is unusable: empty, not an object at all, or an object cut off or malformed. */
function unparsedReason(text: string, parseError: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return 'the body is empty';
  if (!trimmed.startsWith('{')) return 'the body is not a JSON object';
  if (!trimmed.endsWith('}')) return 'the JSON is cut off';
  return `the JSON is malformed (${parseError})`;
}

function parseObject(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; reason: string } {
  const parsed = parseJson(text);
  if (!parsed.ok) return { ok: false, reason: unparsedReason(text, parsed.error) };
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'the body is not a JSON object' };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/**
 * Checks a native Responses upstream's answer to a same-dialect (pass-through) non-streamed request before its bytes
 * go to the client unchanged, and reads its `usage` (as canonical usage; undefined when it has none). It must be one
 * JSON object with `"object": "response"`: this catches what upstreams and proxies send with a 200, HTML pages,
 * truncated JSON, error objects (`{"error": {...}}`, whose message becomes `errorMessage`) and responses whose
 * `status` is `failed` (their `error.message` likewise). Incomplete, queued and in-progress (background) responses
 * are answers. The body is parsed whole, never re-serialised.
 *
 * @example
 * const check = checkOpenAIResponsesAnswer(await upstreamResponse.text());
 * if (!check.ok) throw upstreamError('upstream_invalid_response', 'openai', `Unusable answer: ${check.reason}.`);
 */
export function checkOpenAIResponsesAnswer(text: string): NativeAnswerCheck {
  const parsed = parseObject(text);
  if (!parsed.ok) return { ok: false, reason: parsed.reason };
  const answer = parsed.value;
  if (answer.object === 'response') {
    if (answer.status === 'failed') return notOk('the response failed', answer.error);
    return { ok: true, usage: usageFromResponsesWire(answer.usage) };
  }
  if ((answer.error !== undefined && answer.error !== null) || answer.object === 'error') {
    return notOk('the body is an error object', answer.error ?? answer);
  }
  const object = typeof answer.object === 'string' ? `"${answer.object}"` : 'missing';
  return { ok: false, reason: `the body is not a Responses response (object ${object})` };
}

/**
 * The top-level `id` of a Responses answer (`resp_...`), for storing a relayed answer under its own id; undefined when
 * the text is not a JSON object with a string `id`.
 *
 * @example
 * const id = responseIdOf(answerText) ?? newResponseId();
 */
export function responseIdOf(text: string): string | undefined {
  const parsed = parseObject(text);
  if (!parsed.ok) return undefined;
  const id = parsed.value.id;
  return typeof id === 'string' && id.length > 0 ? id : undefined;
}
