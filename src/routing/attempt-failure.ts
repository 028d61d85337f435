import { isGatewayError, type GatewayError } from '../errors.ts';
import type { AttemptVerdict } from './deployment-circuit.ts';

/** What a failed attempt means for routing. */
export interface AttemptFailure {
  /** Whether the request may be tried again (another deployment first, then fallback groups). */
  retry: boolean;
  /** What the deployment's breaker is told. */
  verdict: AttemptVerdict;
  /** A typed fallback the failure calls for (the prompt is too long for the deployment, or it refused the content). */
  fallback?: 'context-window' | 'content-policy';
  /** How long the upstream asked to wait before trying again (`retry-after`, `retry-after-ms`), ms. */
  retryAfterMs?: number;
}

/** Upstream statuses retried: timeouts, rate limits, server errors and Anthropic's 529 overload (never 501 or 505). */
export function isRetriedUpstreamStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status !== 501 && status !== 505);
}

const contextWindowCodes = new Set(['context_length_exceeded', 'string_above_max_length', 'context_window_exceeded']);
const contextWindowMessage =
  /context[ _-]?(length|window)|maximum context|prompt is too long|too many (input )?tokens|input is too long|exceeds the model's (maximum|context)/i;
const contentPolicyCodes = new Set(['content_policy_violation', 'content_filter', 'content_filtered', 'safety']);
const contentPolicyMessage =
  /content[ _-]?(policy|management policy|filter)|safety (system|filter)|flagged as (unsafe|potentially)/i;

/** `retry-after` (seconds or an HTTP date) or `retry-after-ms` as milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(
  headers: Readonly<Record<string, string>> | undefined,
  wallNow: number,
): number | undefined {
  if (headers === undefined) return undefined;
  const milliseconds = headers['retry-after-ms'];
  if (milliseconds !== undefined && /^\d+(\.\d+)?$/.test(milliseconds.trim())) return Number(milliseconds);
  const value = headers['retry-after']?.trim();
  if (value === undefined || value.length === 0) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - wallNow);
}

function typedFallback(error: GatewayError): AttemptFailure['fallback'] {
  const code = error.code ?? '';
  if (contextWindowCodes.has(code) || contextWindowMessage.test(error.message)) return 'context-window';
  if (contentPolicyCodes.has(code) || contentPolicyMessage.test(error.message)) return 'content-policy';
  return undefined;
}

/**
 * What a failed attempt means for routing. An upstream's error answer is judged by its own HTTP status: 408, 429 and
 * 5xx (not 501/505) are retried and count against the deployment (a 429 with a wait opens its circuit for that wait);
 * 401/403 (the gateway's credential for that deployment is bad) open its circuit at once and move the request to
 * another deployment; any other 4xx is the request's own problem and goes back to the client, unless it says the
 * prompt is too long or was refused under a content policy (a typed fallback). Failures the gateway saw itself
 * (unreachable, timed out, a broken or unusable answer) are retried and counted. A client that left, and the
 * gateway's own errors, stop the request and say nothing about the deployment.
 */
export function classifyAttemptFailure(error: unknown, clientGone: boolean, wallNow: number): AttemptFailure {
  if (clientGone || !isGatewayError(error) || error.status === 499)
    return { retry: false, verdict: { kind: 'neutral' } };
  const status = error.upstreamStatus;
  if (status === undefined) {
    if (error.provider !== undefined && error.retryable) return { retry: true, verdict: { kind: 'failure' } };
    return { retry: false, verdict: { kind: 'neutral' } };
  }
  if (status === 401 || status === 403) return { retry: true, verdict: { kind: 'open' } };
  if (isRetriedUpstreamStatus(status)) {
    const wait = retryAfterMs(error.headers, wallNow);
    if (status === 429 && wait !== undefined)
      return { retry: true, verdict: { kind: 'open', forMs: wait }, retryAfterMs: wait };
    return { retry: true, verdict: { kind: 'failure' }, ...(wait === undefined ? {} : { retryAfterMs: wait }) };
  }
  const fallback = status >= 400 && status < 500 ? typedFallback(error) : undefined;
  return { retry: false, verdict: { kind: 'neutral' }, ...(fallback === undefined ? {} : { fallback }) };
}
