import type { NativeAnswerCheck } from '../dialect.ts';
import { parseAnswerObject, unusableAnswer } from '../native-answer-check.ts';
import { usageFromResponsesWire } from './openai-responses-usage.ts';

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
  const parsed = parseAnswerObject(text);
  if (!parsed.ok) return { ok: false, reason: parsed.reason };
  const answer = parsed.value;
  if (answer.object === 'response') {
    if (answer.status === 'failed') return unusableAnswer('the response failed', answer.error);
    return { ok: true, usage: usageFromResponsesWire(answer.usage) };
  }
  if ((answer.error !== undefined && answer.error !== null) || answer.object === 'error') {
    return unusableAnswer('the body is an error object', answer.error ?? answer);
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
  const parsed = parseAnswerObject(text);
  if (!parsed.ok) return undefined;
  const id = parsed.value.id;
  return typeof id === 'string' && id.length > 0 ? id : undefined;
}
