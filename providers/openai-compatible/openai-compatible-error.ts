import * as z from 'zod/mini';
import { GatewayError, type GatewayErrorType } from '../../src/errors.ts';

/** The provider id errors from this translator carry (the seam gives error mapping no deployment name). */
export const openAICompatibleProviderId = 'openai-compatible';

const optionalText = z.catch(z.optional(z.string()), undefined);
const errorFields = {
  message: optionalText,
  type: optionalText,
  param: optionalText,
  code: z.catch(z.optional(z.union([z.string(), z.number()])), undefined),
};

/**
 * Error bodies OpenAI-shaped servers send, read field by field so that no shape makes mapping fail: OpenAI's
 * `{error:{message,type,param,code}}`, `{error:"text"}` (some proxies), top-level `{message,type,code}` (older vLLM,
 * where `code` is the HTTP status as a number) and FastAPI's `{detail}`.
 */
const upstreamErrorBodySchema = z.object({
  error: z.catch(z.optional(z.union([z.string(), z.object(errorFields)])), undefined),
  detail: z.optional(z.unknown()),
  ...errorFields,
});

/** What the gateway answers for one upstream status. */
interface StatusRule {
  status: number;
  type: GatewayErrorType;
  retryable: boolean;
}

const invalid = (status: number): StatusRule => ({ status, type: 'invalid_request_error', retryable: false });
const upstreamAuthentication: StatusRule = { status: 502, type: 'upstream_error', retryable: true };

/**
 * Upstream status -> gateway answer. The client's own mistakes keep their status. A 401/403 means the gateway's
 * upstream credential is wrong, not the client's key, so it is a 502 that another deployment may not share
 * (retryable). 402 (OpenRouter's "out of credits") is treated like OpenAI's `insufficient_quota`. Other 4xx are
 * upstream misbehaviour (502, not retryable); other 5xx are 502 and retryable.
 */
const statusRules: Record<number, StatusRule> = {
  400: invalid(400),
  401: upstreamAuthentication,
  402: { status: 429, type: 'insufficient_quota', retryable: true },
  403: upstreamAuthentication,
  404: { status: 404, type: 'not_found_error', retryable: false },
  408: { status: 504, type: 'timeout_error', retryable: true },
  409: invalid(409),
  413: invalid(413),
  422: invalid(422),
  429: { status: 429, type: 'rate_limit_error', retryable: true },
  503: { status: 503, type: 'upstream_error', retryable: true },
  504: { status: 504, type: 'timeout_error', retryable: true },
};

function statusRule(status: number): StatusRule {
  return statusRules[status] ?? { status: 502, type: 'upstream_error', retryable: status >= 500 };
}

/** Response headers the client should see too: when to try again. */
const passedHeaders = ['retry-after', 'retry-after-ms'];

/** What an upstream error body says, as far as it says it. */
interface UpstreamErrorFields {
  message?: string | undefined;
  type?: string | undefined;
  param?: string | undefined;
  code?: string | number | undefined;
}

function readUpstreamError(body: unknown): UpstreamErrorFields {
  // Text bodies (proxies' HTML pages, plain-text 502s) are cut short: the message goes to the client.
  if (typeof body === 'string') return { message: body.trim().slice(0, 2000) || undefined };
  const parsed = upstreamErrorBodySchema.safeParse(body);
  if (!parsed.success) return {};
  const { error, detail, ...topLevel } = parsed.data;
  if (typeof error === 'object') return error;
  const detailText = detail == null ? undefined : typeof detail === 'string' ? detail : JSON.stringify(detail);
  return { ...topLevel, message: error ?? topLevel.message ?? detailText };
}

/** Hides key material upstreams echo in authentication errors (`sk-proj-****1234`): the client must not see it. */
function redactKeys(message: string): string {
  return message.replace(/\S*\*{4,}\S*|\b(?:sk|gsk|xai|fw)-[\w-]{8,}/g, '[redacted]');
}

/**
 * Maps an OpenAI-compatible error response to the gateway's error, keeping the upstream's message, `param` and
 * `code` (a numeric code becomes its string), the body for logs, and `retry-after` headers for the client.
 *
 * @example
 * mapOpenAICompatibleError(429, { error: { message: 'Slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' } }, headers);
 * // GatewayError { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', retryable: true }
 */
export function mapOpenAICompatibleError(status: number, body: unknown, headers: Headers): GatewayError {
  const upstream = readUpstreamError(body);
  const rule = statusRule(status);
  const code = upstream.code === undefined ? undefined : String(upstream.code);
  const quotaExhausted = status === 429 && (code === 'insufficient_quota' || upstream.type === 'insufficient_quota');
  const authentication = status === 401 || status === 403;
  const upstreamMessage = upstream.message ?? `Upstream ${openAICompatibleProviderId} returned HTTP ${status}.`;
  const responseHeaders = Object.fromEntries(
    passedHeaders.flatMap((name) => (headers.has(name) ? [[name, headers.get(name) as string]] : [])),
  );
  return new GatewayError({
    status: rule.status,
    type: quotaExhausted ? 'insufficient_quota' : rule.type,
    code: authentication ? 'upstream_authentication_failed' : code,
    param: upstream.param,
    message: authentication
      ? `The upstream provider rejected the gateway's credentials (HTTP ${status}); this is a gateway configuration problem, not your API key. Upstream said: ${redactKeys(upstreamMessage)}`
      : upstreamMessage,
    provider: openAICompatibleProviderId,
    retryable: rule.retryable,
    upstreamBody: body,
    ...(Object.keys(responseHeaders).length > 0 ? { headers: responseHeaders } : {}),
  });
}

/**
 * Maps an error sent inside a successful response: an `{error:{...}}` stream event or a 200 body carrying only an
 * error. There is no HTTP status, so a numeric `code` in the HTTP range (vLLM, OpenRouter) stands in for it;
 * otherwise the error counts as an upstream server error.
 */
export function mapOpenAICompatibleInBandError(body: unknown): GatewayError {
  const code = readUpstreamError(body).code;
  const status = typeof code === 'number' && code >= 400 && code <= 599 ? code : 500;
  return mapOpenAICompatibleError(status, body, new Headers());
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
