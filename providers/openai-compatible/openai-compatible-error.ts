import * as z from 'zod/mini';
import { GatewayError } from '../../src/errors.ts';
import { createUpstreamErrorMapper } from '../../src/errors/upstream-error-mapping.ts';

/** The provider id errors from this translator carry (the seam gives error mapping no deployment name). */
export const openAICompatibleProviderId = 'openai-compatible';

/**
 * The error bodies OpenAI-shaped servers send, declared: OpenAI's `{error:{message,type,param,code}}`,
 * `{error:"text"}` (some proxies), top-level `{message,type,code}` (older vLLM, where `code` is the HTTP status as a
 * number) and FastAPI's `{detail}`. The client's own mistakes keep their status; a 404 is the model the upstream does
 * not know (kept a 404, as OpenAI answers it); a 429 whose code or type is `insufficient_quota` (and a 402,
 * OpenRouter's "out of credits") is answered as OpenAI's `insufficient_quota`. Other statuses follow the shared table
 * (src/errors/upstream-error-mapping.ts), without codes of the gateway's own where the upstream gave none.
 */
const openAICompatibleErrorMapper = createUpstreamErrorMapper({
  provider: openAICompatibleProviderId,
  label: `Upstream ${openAICompatibleProviderId}`,
  fields: {
    message: ['error.message', 'error', 'message', 'detail.0.msg', 'detail'],
    type: ['error.type', 'type'],
    code: ['error.code', 'code'],
    param: ['error.param', 'param'],
  },
  statuses: {
    404: { status: 404, type: 'not_found_error', retryable: false },
    408: { status: 504, type: 'timeout_error', retryable: true },
    413: { status: 413, type: 'invalid_request_error', retryable: false },
    424: { status: 502, type: 'upstream_error', retryable: true },
    429: { status: 429, type: 'rate_limit_error', retryable: true },
    500: { status: 502, type: 'upstream_error', retryable: true },
    503: { status: 503, type: 'upstream_error', retryable: true },
    504: { status: 504, type: 'timeout_error', retryable: true },
    529: { status: 503, type: 'upstream_error', retryable: true },
  },
  rulesByType: { insufficient_quota: { status: 429, type: 'insufficient_quota', retryable: true } },
});

/**
 * Maps an OpenAI-compatible error response to the gateway's error, keeping the upstream's message, `param` and
 * `code` (a numeric code becomes its string), the body for logs, and `retry-after` headers for the client.
 *
 * @example
 * mapOpenAICompatibleError(429, { error: { message: 'Slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' } }, headers);
 * // GatewayError { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', retryable: true }
 */
export function mapOpenAICompatibleError(status: number, body: unknown, headers: Headers): GatewayError {
  return openAICompatibleErrorMapper.map(status, body, headers);
}

/**
 * Maps an error sent inside a successful response: an `{error:{...}}` stream event or a 200 body carrying only an
 * error. There is no HTTP status, so a numeric `code` in the HTTP range (vLLM, OpenRouter) stands in for it;
 * otherwise the error counts as an upstream server error.
 */
export function mapOpenAICompatibleInBandError(body: unknown): GatewayError {
  return openAICompatibleErrorMapper.mapInBand(body);
}

/** True when a parsed body is an error object (`{error: ...}` with a non-null `error`) rather than a result. */
export function isOpenAICompatibleErrorBody(body: unknown): boolean {
  return typeof body === 'object' && body !== null && 'error' in body && (body as { error: unknown }).error != null;
}

/**
 * The error for a successful upstream body that does not have the shape this translator reads: the upstream broke
 * the protocol, so it is a 502 (retryable: another deployment may answer properly).
 */
export function invalidOpenAICompatibleBody(
  what: string,
  issues: readonly z.core.$ZodIssue[],
  body: unknown,
): GatewayError {
  const issue = issues[0];
  const where = issue === undefined || issue.path.length === 0 ? '' : ` at ${issue.path.map(String).join('.')}`;
  const detail =
    issue === undefined ? '' : issue.code === 'invalid_type' ? `: expected ${issue.expected}` : `: ${issue.code}`;
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_invalid_response',
    provider: openAICompatibleProviderId,
    retryable: true,
    upstreamBody: body,
    message: `Upstream ${openAICompatibleProviderId} sent an unexpected ${what}${where}${detail}.`,
  });
}
