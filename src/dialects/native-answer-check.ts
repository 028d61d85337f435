import { parseJson } from '../framing/parse-json.ts';
import type { NativeAnswerCheck } from './dialect.ts';

/** The message of an upstream's error object (`{message}`, or a bare string), when it has one. */
function errorMessageOf(error: unknown): string | undefined {
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    const message = (error as Record<string, unknown>).message;
    if (typeof message === 'string') return message;
  }
  return undefined;
}

/**
 * The check result for an unusable same-dialect answer: `reason` completes "its answer ...", and the upstream's own
 * error message is kept when `error` carries one.
 *
 * @example
 * return unusableAnswer('the body is an error object', answer.error);
 */
export function unusableAnswer(reason: string, error?: unknown): NativeAnswerCheck {
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

/**
 * Parses a same-dialect answer that must be one JSON object, or says why it is not one (empty, not an object, cut
 * off, malformed), for the dialects' answer checks.
 *
 * @example
 * const parsed = parseAnswerObject(text);
 * if (!parsed.ok) return { ok: false, reason: parsed.reason };
 */
export function parseAnswerObject(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; reason: string } {
  const parsed = parseJson(text);
  if (!parsed.ok) return { ok: false, reason: unparsedReason(text, parsed.error) };
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'the body is not a JSON object' };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
