/**
 * The one error class of the gateway, and its rendering for each client dialect. Everything the gateway answers
 * with an error status goes through {@link renderError}; providers map upstream failures to a {@link GatewayError}
 * and never build error responses themselves.
 *
 * Errors are recognised by a marker property rather than `instanceof`, because bundles (a Worker, a library
 * consumer's own copy) can hold two copies of this class.
 */

const gatewayErrorMarker = '__toriiGatewayError';

/** OpenAI error `type` values the gateway uses. */
export type GatewayErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  /** OpenAI's types for rate-limit refusals: which limit (requests or tokens per minute) refused. */
  | 'requests'
  | 'tokens'
  | 'insufficient_quota'
  | 'api_error'
  | 'upstream_error'
  | 'timeout_error';

/** What a {@link GatewayError} is made from. */
export interface GatewayErrorInit {
  status: number;
  message: string;
  type: GatewayErrorType;
  code?: string | null;
  param?: string | null;
  /** The provider id when the error came from (or concerns) an upstream. */
  provider?: string;
  /** Whether trying again (maybe on another deployment) could succeed. */
  retryable?: boolean;
  /** The upstream's HTTP status when the error is an upstream's error answer (routing decides retries on it). */
  upstreamStatus?: number;
  /** The upstream's error body, kept for logs. */
  upstreamBody?: unknown;
  /** Extra response headers, such as `retry-after`. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** The one error class: carries the HTTP status and everything the client-facing envelope needs. */
export class GatewayError extends Error {
  readonly [gatewayErrorMarker] = true;
  readonly status: number;
  readonly type: GatewayErrorType;
  readonly code: string | null;
  readonly param: string | null;
  readonly provider: string | undefined;
  readonly retryable: boolean;
  readonly upstreamStatus: number | undefined;
  readonly upstreamBody: unknown;
  readonly headers: Record<string, string> | undefined;

  constructor(init: GatewayErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'GatewayError';
    this.status = init.status;
    this.type = init.type;
    this.code = init.code ?? null;
    this.param = init.param ?? null;
    this.provider = init.provider;
    this.retryable = init.retryable ?? false;
    this.upstreamStatus = init.upstreamStatus;
    this.upstreamBody = init.upstreamBody;
    this.headers = init.headers;
  }
}

/** True for a {@link GatewayError} from any copy of this module. */
export function isGatewayError(value: unknown): value is GatewayError {
  return typeof value === 'object' && value !== null && (value as Record<string, unknown>)[gatewayErrorMarker] === true;
}

/** Turns anything thrown into a {@link GatewayError}; unknown failures become a 500 that hides internals. */
export function toGatewayError(value: unknown): GatewayError {
  if (isGatewayError(value)) return value;
  return new GatewayError({
    status: 500,
    type: 'api_error',
    code: 'internal_error',
    message: 'Internal gateway error.',
    cause: value,
  });
}

/** The client dialects that can receive an error. */
export type ErrorDialect = 'openai' | 'anthropic';

/** The OpenAI error envelope, exactly as OpenAI's API and SDK shape it. */
export function openAIErrorBody(error: GatewayError): {
  error: { message: string; type: string; param: string | null; code: string | null };
} {
  return { error: { message: error.message, type: error.type, param: error.param, code: error.code } };
}

const anthropicErrorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  503: 'overloaded_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** The Anthropic error envelope (`{type:"error",error:{type,message}}`). */
export function anthropicErrorBody(error: GatewayError): { type: 'error'; error: { type: string; message: string } } {
  const type = anthropicErrorTypes[error.status] ?? (error.status >= 500 ? 'api_error' : 'invalid_request_error');
  return { type: 'error', error: { type, message: error.message } };
}

/**
 * The status an Anthropic client gets: Anthropic answers overload with 529 (`overloaded_error`), which its SDKs retry,
 * where OpenAI's convention (and the gateway's errors) use 503.
 */
function anthropicStatus(status: number): number {
  return status === 503 ? 529 : status;
}

/**
 * Renders an error as a complete Response in the client's dialect. With {@link renderErrorParts}, the only place error
 * responses are built.
 */
export function renderError(error: GatewayError, dialect: ErrorDialect, headers?: Record<string, string>): Response {
  const rendered = renderErrorParts(error, dialect, headers);
  return new Response(rendered.body, { status: rendered.status, headers: rendered.headers });
}

/** An error response's parts, before they become a Response (see {@link renderErrorParts}). */
export interface RenderedError {
  status: number;
  /** A fresh object, the caller's to extend. */
  headers: Record<string, string>;
  body: string;
}

/**
 * {@link renderError} without the Response: the status, headers and JSON body of the error in the client's envelope,
 * for servers that write the response themselves.
 *
 * @example
 * const { status, headers, body } = renderErrorParts(error, 'anthropic');
 */
export function renderErrorParts(
  error: GatewayError,
  dialect: ErrorDialect,
  headers?: Record<string, string>,
): RenderedError {
  const anthropic = dialect === 'anthropic';
  const body = anthropic ? anthropicErrorBody(error) : openAIErrorBody(error);
  return {
    status: anthropic ? anthropicStatus(error.status) : error.status,
    headers: { 'content-type': 'application/json', ...error.headers, ...headers },
    body: JSON.stringify(body),
  };
}

/** Shorthand for a 400 naming the offending field. */
export function invalidRequest(message: string, param: string | null = null, code: string | null = null): GatewayError {
  return new GatewayError({ status: 400, type: 'invalid_request_error', message, param, code });
}

/**
 * Shorthand for a 502 `upstream_error` about a provider's answer (status and retryability overridable), the
 * upstream-side counterpart of {@link invalidRequest}.
 *
 * @example
 * throw upstreamError('upstream_stream_incomplete', 'openai', 'The stream ended early.', { retryable: true });
 */
export function upstreamError(
  code: string,
  provider: string,
  message: string,
  options: { status?: number; retryable?: boolean; upstreamBody?: unknown } = {},
): GatewayError {
  return new GatewayError({
    status: options.status ?? 502,
    type: 'upstream_error',
    code,
    provider,
    retryable: options.retryable ?? false,
    ...(options.upstreamBody === undefined ? {} : { upstreamBody: options.upstreamBody }),
    message,
  });
}
