import type { NativeAnswerCheck } from '../dialect.ts';
import { parseAnswerObject, unusableAnswer } from '../native-answer-check.ts';
import { anthropicUsageSchema, toCanonicalUsage } from '../../canonical/wire/anthropic-wire-usage.ts';

/**
 * Checks an Anthropic upstream's answer to a same-dialect (pass-through) Messages request before its bytes go to
 * the client unchanged, and reads its `usage` (as canonical usage; undefined when it has none). It must be one JSON
 * object with `"type": "message"`: this catches what upstreams and proxies send with a 200, HTML pages, truncated
 * JSON, errors inside a success (`{"type":"error","error":{...}}`, whose message becomes `errorMessage`; an
 * OpenAI-style `{"error":{...}}` from a compatible proxy counts too). The body is parsed whole (an Anthropic answer
 * is at most a few hundred kilobytes), never re-serialised.
 *
 * @example
 * const check = checkAnthropicAnswer(await upstreamResponse.text());
 * if (!check.ok) throw upstreamError('upstream_invalid_response', 'anthropic', `Unusable answer: ${check.reason}.`);
 */
export function checkAnthropicAnswer(text: string): NativeAnswerCheck {
  const parsed = parseAnswerObject(text);
  if (!parsed.ok) return { ok: false, reason: parsed.reason };
  const answer = parsed.value;
  if (answer.type === 'error' || (answer.error !== undefined && answer.error !== null))
    return unusableAnswer('the body is an error object', answer.error);
  if (answer.type !== 'message') {
    const type = typeof answer.type === 'string' ? `"${answer.type}"` : 'missing';
    return { ok: false, reason: `the body is not an Anthropic message (type ${type})` };
  }
  const usage = anthropicUsageSchema.safeParse(answer.usage);
  return { ok: true, usage: usage.success ? toCanonicalUsage(usage.data, answer.usage) : undefined };
}
