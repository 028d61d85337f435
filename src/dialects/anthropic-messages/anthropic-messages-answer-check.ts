import { parseJson } from '../../framing/parse-json.ts';
import type { NativeAnswerCheck } from '../dialect.ts';
import { anthropicUsageSchema, toCanonicalUsage } from '../../canonical/wire/anthropic-wire-usage.ts';

function errorMessageOf(error: unknown): string | undefined {
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    const message = (error as Record<string, unknown>).message;
    if (typeof message === 'string') return message;
  }
  return undefined;
}

function errorAnswer(error: unknown): NativeAnswerCheck {
  const message = errorMessageOf(error);
  return {
    ok: false,
    reason: 'the body is an error object',
    ...(message === undefined ? {} : { errorMessage: message }),
  };
}

/** Why a body that did not parse is unusable: empty, not an object at all, or an object cut off or malformed. */
function unparsedReason(text: string, parseError: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return 'the body is empty';
  if (!trimmed.startsWith('{')) return 'the body is not a JSON object';
  if (!trimmed.endsWith('}')) return 'the JSON is cut off';
  return `the JSON is malformed (${parseError})`;
}

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
  const parsed = parseJson(text);
  if (!parsed.ok) return { ok: false, reason: unparsedReason(text, parsed.error) };
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, reason: 'the body is not a JSON object' };
  const answer = value as Record<string, unknown>;
  if (answer.type === 'error' || (answer.error !== undefined && answer.error !== null))
    return errorAnswer(answer.error);
  if (answer.type !== 'message') {
    const type = typeof answer.type === 'string' ? `"${answer.type}"` : 'missing';
    return { ok: false, reason: `the body is not an Anthropic message (type ${type})` };
  }
  const usage = anthropicUsageSchema.safeParse(answer.usage);
  return { ok: true, usage: usage.success ? toCanonicalUsage(usage.data, answer.usage) : undefined };
}
