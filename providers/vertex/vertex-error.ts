import type { GatewayError } from '../../src/errors.ts';
import { createUpstreamErrorMapper } from '../../src/errors/upstream-error-mapping.ts';
import { vertexProviderId } from './vertex-options.ts';
import { googleErrorStatuses } from '../gemini/gemini-error.ts';

/** Anthropic's error types (the model's own answers, which Vertex relays for Claude) and their HTTP statuses. */
const anthropicErrorTypeCodes: Readonly<Record<string, number>> = {
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
};

/**
 * The error mapper of both Vertex translators. Vertex answers in two envelopes, both read here:
 * - Google's, for everything Vertex itself decides (credentials, IAM, quota, unknown models, bad arguments to Gemini):
 *   `{"error":{"code":403,"message":"...","status":"PERMISSION_DENIED","details":[...]}}`;
 * - Anthropic's, relayed from Claude itself: `{"type":"error","error":{"type":"overloaded_error","message":"..."}}`.
 * Both keep the message at `error.message`; the type is Anthropic's `error.type`, the code Google's `error.status`.
 * A 401/403 is the gateway's credential (a 502 another deployment may not share), a 404 the configured model name
 * (502 `upstream_model_not_found`), a 400 `FAILED_PRECONDITION` the project's setup (a retryable 502
 * `upstream_model_error`), a 429 `RESOURCE_EXHAUSTED` a retryable 429 with `retry-after` passed on, and
 * Claude's 529 a 503.
 *
 * @example
 * vertexErrorMapper.map(429, { error: { code: 429, message: 'Resource exhausted...', status: 'RESOURCE_EXHAUSTED' } }, new Headers());
 * // GatewayError { status: 429, type: 'rate_limit_error', code: 'RESOURCE_EXHAUSTED', retryable: true }
 */
export const vertexErrorMapper = createUpstreamErrorMapper({
  provider: vertexProviderId,
  label: 'Vertex AI',
  fields: {
    // `0.error...`: a stream request refused before it started answers with a one-element array of envelopes.
    message: ['error.message', '0.error.message', 'message'],
    type: ['error.type'],
    code: ['error.status', '0.error.status'],
  },
  // Google's statuses and error reasons, as Gemini's API sends them (the same envelope).
  statusByType: { ...googleErrorStatuses, ...anthropicErrorTypeCodes },
});

/**
 * Maps a Vertex error answer (either envelope, or any text a proxy sent) to a {@link GatewayError}; see
 * {@link vertexErrorMapper}.
 *
 * @example
 * const error = mapVertexError(403, body, response.headers); // 502 upstream_authentication_failed
 */
export function mapVertexError(status: number, body: unknown, headers: Headers): GatewayError {
  return vertexErrorMapper.map(status, body, headers);
}
