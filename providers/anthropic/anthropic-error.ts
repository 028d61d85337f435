import type { GatewayError } from '../../src/errors.ts';
import { createUpstreamErrorMapper } from '../../src/errors/upstream-error-mapping.ts';

/**
 * Anthropic's documented error statuses and types, declared. Failures of the gateway's own upstream setup (its
 * Anthropic key, billing, the configured model name) are 502s: the client's request was fine and another deployment
 * may serve it, so they are retryable. A 404 (`not_found_error`, almost always the configured upstream model name) is
 * a 502 `upstream_model_not_found`, not a 404: the model the client asked for is a gateway model group that exists.
 * The shared table (src/errors/upstream-error-mapping.ts) covers the rest; Anthropic's error `type`s give the status
 * of errors sent inside a stream.
 */
const anthropicErrorMapper = createUpstreamErrorMapper({
  provider: 'anthropic',
  label: 'Anthropic',
  fields: { message: ['error.message'], type: ['error.type'] },
  statuses: {
    402: { status: 502, type: 'upstream_error', code: 'upstream_billing_error', replaceCode: true, retryable: true },
  },
  statusByType: {
    invalid_request_error: 400,
    authentication_error: 401,
    billing_error: 402,
    permission_error: 403,
    not_found_error: 404,
    request_too_large: 413,
    rate_limit_error: 429,
    api_error: 500,
    timeout_error: 504,
    overloaded_error: 529,
  },
  passedHeaders: ['retry-after'],
});

/**
 * Maps an Anthropic error response (`{type:"error",error:{type,message}}`, or any text a proxy in between sent) to
 * a {@link GatewayError} that keeps Anthropic's message and body. Unlisted 5xx become retryable 502s, anything else
 * a non-retryable 502. `retry-after` is passed through whenever Anthropic sent one on a retryable status.
 */
export function mapAnthropicError(status: number, body: unknown, headers: Headers): GatewayError {
  return anthropicErrorMapper.map(status, body, headers);
}

/**
 * Maps the `error` event Anthropic sends mid-stream (`{type:"error",error:{type:"overloaded_error",...}}`) as if it
 * had been the HTTP response with that error type's status.
 */
export function mapAnthropicStreamError(data: unknown): GatewayError {
  return anthropicErrorMapper.mapInBand(data);
}
