import type * as z from 'zod/mini';
import { GatewayError } from '../../src/errors.ts';
import { createUpstreamErrorMapper } from '../../src/errors/upstream-error-mapping.ts';
import { cohereProviderId } from './cohere-options.ts';

/**
 * Cohere's error mapping. Its error bodies are `{"message": "..."}`, sometimes with a request `id` (not a code, so
 * not read as one); `error.message` is read too, for proxies in between. Statuses follow the shared table
 * (400/422 the client's, 401/403 the gateway's key, 402 out of credits as `insufficient_quota`, 404 the configured
 * model, 429, 500, 503, 504), plus Cohere's own:
 * - 498 (`InvalidToken`): Cohere's API specification says it "is returned when a request or response contains a
 *   deny-listed token", a content block, not a credential problem: a 400 `content_filter`, not retried.
 * - 499 (`RequestCancelled`): the request was cancelled on Cohere's side (the gateway's own cancellations never reach
 *   the mapping): a retryable 502.
 *
 * @example
 * cohereErrorMapper.map(429, { message: 'You are past the per minute request limit, please wait and try again later.' }, headers);
 * // GatewayError { status: 429, type: 'rate_limit_error', retryable: true }
 */
export const cohereErrorMapper = createUpstreamErrorMapper({
  provider: cohereProviderId,
  label: 'Cohere',
  fields: { message: ['message', 'error.message', 'error'] },
  statuses: {
    498: { status: 400, type: 'invalid_request_error', code: 'content_filter', replaceCode: true, retryable: false },
    499: { status: 502, type: 'upstream_error', code: 'upstream_request_cancelled', retryable: true },
  },
});

/**
 * Maps a Cohere error response (the translator's `mapError`).
 *
 * @example
 * mapCohereError(401, { message: 'invalid api token' }, new Headers()); // 502 upstream_authentication_failed
 */
export function mapCohereError(status: number, body: unknown, headers: Headers): GatewayError {
  return cohereErrorMapper.map(status, body, headers);
}

/** The fields a schema found wrong, for error messages (`message.content.0.type, usage`). */
export function invalidFields(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((issue) => issue.path.join('.') || '(root)').join(', ');
}

/**
 * The error for a successful Cohere body that does not have the shape this translator reads: Cohere broke its
 * protocol, a 502 `upstream_invalid_response` another deployment may not repeat (retryable).
 */
export function invalidCohereBody(what: string, invalid: string, body: unknown): GatewayError {
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_invalid_response',
    provider: cohereProviderId,
    retryable: true,
    upstreamBody: body,
    message: `Cohere sent ${what} the gateway cannot read (invalid: ${invalid}).`,
  });
}
