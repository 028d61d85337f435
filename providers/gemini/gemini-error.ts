import type { GatewayError } from '../../src/errors.ts';
import { createUpstreamErrorMapper, type UpstreamErrorMapper } from '../../src/errors/upstream-error-mapping.ts';

/**
 * What Google's error `status` names (and the `reason` of an `ErrorInfo` detail, where it says more) stand for:
 * google.rpc canonical codes with their documented HTTP statuses, plus the reasons that make a 400 an authentication
 * failure. The Gemini API answers a bad key with HTTP 400 `INVALID_ARGUMENT` and an `ErrorInfo` detail of reason
 * `API_KEY_INVALID`: that is the gateway's credential, not the client's request, so it maps to 401 and thus to the
 * shared authentication rule (502 `upstream_authentication_failed`, retryable on another deployment).
 * `FAILED_PRECONDITION` (Google's "free tier not available in your country; enable billing") is the deployment's
 * condition, not the client's: it maps to 424 and thus to 502 `upstream_model_error`, retryable elsewhere.
 */
export const googleErrorStatuses: Readonly<Record<string, number>> = {
  INVALID_ARGUMENT: 400,
  OUT_OF_RANGE: 400,
  FAILED_PRECONDITION: 424,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ABORTED: 409,
  ALREADY_EXISTS: 409,
  RESOURCE_EXHAUSTED: 429,
  CANCELLED: 499,
  INTERNAL: 500,
  UNKNOWN: 500,
  DATA_LOSS: 500,
  UNIMPLEMENTED: 501,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
  API_KEY_INVALID: 401,
  API_KEY_EXPIRED: 401,
  ACCESS_TOKEN_EXPIRED: 401,
  ACCESS_TOKEN_TYPE_UNSUPPORTED: 401,
  CREDENTIALS_MISSING: 401,
  API_KEY_SERVICE_BLOCKED: 403,
  API_KEY_HTTP_REFERRER_BLOCKED: 403,
  API_KEY_IP_ADDRESS_BLOCKED: 403,
  SERVICE_DISABLED: 403,
  CONSUMER_SUSPENDED: 403,
  CONSUMER_INVALID: 403,
};

/**
 * Creates the mapper of Google's error envelope, `{error: {code, message, status, details: [...]}}`, for a provider
 * id and label; the Gemini API's is {@link geminiErrorMapper}, Vertex AI builds its own with the same declaration.
 * The message is `error.message`, the code the client sees is Google's `status` (`RESOURCE_EXHAUSTED` ...), and the
 * status is re-read from the first `ErrorInfo`-style `reason` among the first three details, else from `status` (see
 * the table above). Errors inside a stream (a chunk that is an error envelope) are mapped by `mapInBand`.
 *
 * @example
 * const vertexErrorMapper = createGoogleErrorMapper('vertex', 'Vertex AI');
 * vertexErrorMapper.map(429, body, headers).status; // 429
 */
export function createGoogleErrorMapper(provider: string, label: string): UpstreamErrorMapper {
  return createUpstreamErrorMapper({
    provider,
    label,
    fields: {
      message: ['error.message', 'message', '0.error.message'],
      type: ['error.details.0.reason', 'error.details.1.reason', 'error.details.2.reason', 'error.status'],
      code: ['error.status', '0.error.status', 'error.code'],
    },
    statusByType: googleErrorStatuses,
  });
}

/**
 * The Gemini API's error mapper (see {@link createGoogleErrorMapper}).
 *
 * @example
 * geminiErrorMapper.map(400, { error: { code: 400, message: 'API key not valid.', status: 'INVALID_ARGUMENT',
 *   details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }] } }, new Headers());
 * // GatewayError { status: 502, code: 'upstream_authentication_failed' }
 */
export const geminiErrorMapper: UpstreamErrorMapper = createGoogleErrorMapper('gemini', 'Gemini');

/**
 * Maps a Gemini API error response to a GatewayError (the translator's `mapError`).
 *
 * @example
 * mapGeminiError(429, body, response.headers).type; // 'rate_limit_error'
 */
export function mapGeminiError(status: number, body: unknown, headers: Headers): GatewayError {
  return geminiErrorMapper.map(status, body, headers);
}
