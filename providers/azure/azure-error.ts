import type { GatewayError } from '../../src/errors.ts';
import { createUpstreamErrorMapper } from '../../src/errors/upstream-error-mapping.ts';
import { azureOpenAIProviderId } from './azure-options.ts';

/**
 * Azure OpenAI's error bodies, declared. Azure sends OpenAI's envelope `{error:{code, message, param, type,
 * innererror}}`, with codes of its own (`content_filter`, `DeploymentNotFound`, and the HTTP status as a string, `"429"`,
 * `"401"`); its gateway answers a missing or bad Entra ID token with a different shape, `{statusCode, message}`.
 *
 * - 400 `content_filter` (the prompt was filtered; `innererror.content_filter_result` says why) stays a 400 with code
 *   `content_filter` and Azure's message: routing's typed fallback knows that code as a content-policy refusal.
 * - 401/403 (bad key, bad or expired token, missing role) are the gateway's credential problem: 502
 *   `upstream_authentication_failed` (the shared rule).
 * - 404 `DeploymentNotFound` is the configured deployment name: 502 `upstream_model_not_found` (the shared rule).
 * - 429 is a rate limit whatever Azure's code (`"429"` is no code a client can read): `rate_limit_exceeded`, with
 *   `retry-after` / `retry-after-ms` passed on.
 */
const azureErrorMapper = createUpstreamErrorMapper({
  provider: azureOpenAIProviderId,
  label: 'Azure OpenAI',
  fields: {
    message: ['error.message', 'message', 'error'],
    type: ['error.type'],
    code: ['error.code', 'code'],
    param: ['error.param'],
  },
  statuses: {
    429: { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', replaceCode: true, retryable: true },
  },
  statusByType: { content_filter: 400, DeploymentNotFound: 404 },
});

/**
 * Maps an Azure OpenAI error answer to the gateway's error (see the declaration above).
 *
 * @example
 * mapAzureOpenAIError(400, { error: { code: 'content_filter', message: 'The response was filtered ...' } }, headers);
 * // GatewayError { status: 400, code: 'content_filter', retryable: false }
 */
export function mapAzureOpenAIError(status: number, body: unknown, headers: Headers): GatewayError {
  return azureErrorMapper.map(status, body, headers);
}

/**
 * Maps an error sent inside a successful answer (an `{error:{...}}` stream event or 200 body): its status from its
 * code (`content_filter` is a 400, a numeric code in the HTTP range is that status), else a 500.
 *
 * @example
 * mapAzureOpenAIInBandError({ error: { code: 'content_filter', message: '...' } }).status; // 400
 */
export function mapAzureOpenAIInBandError(body: unknown): GatewayError {
  return azureErrorMapper.mapInBand(body);
}
