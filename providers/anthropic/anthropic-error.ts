import * as z from 'zod/mini';
import { GatewayError, type GatewayErrorType } from '../../src/errors.ts';

/** How one upstream HTTP status is answered to the client. */
interface AnthropicErrorMapping {
  status: number;
  type: GatewayErrorType;
  code: string | null;
  retryable: boolean;
}

/**
 * Anthropic's documented error statuses and what the client sees for each. Failures of the gateway's own upstream
 * setup (its Anthropic key, billing, the configured model name) are 502s: the client's request was fine and another
 * deployment may serve it, so they are retryable. In particular a 404 (`not_found_error`, almost always the
 * configured upstream model name) is a 502 `upstream_model_not_found`, not a 404: the model the client asked for is a
 * gateway model group that exists; answering 404 would blame the client for the operator's configuration.
 */
const errorMappings: Record<number, AnthropicErrorMapping> = {
  400: { status: 400, type: 'invalid_request_error', code: null, retryable: false },
  401: { status: 502, type: 'upstream_error', code: 'upstream_authentication_failed', retryable: true },
  402: { status: 502, type: 'upstream_error', code: 'upstream_billing_error', retryable: true },
  403: { status: 502, type: 'upstream_error', code: 'upstream_authentication_failed', retryable: true },
  404: { status: 502, type: 'upstream_error', code: 'upstream_model_not_found', retryable: true },
  413: { status: 413, type: 'invalid_request_error', code: 'request_too_large', retryable: false },
  429: { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', retryable: true },
  500: { status: 502, type: 'upstream_error', code: 'upstream_server_error', retryable: true },
  504: { status: 504, type: 'timeout_error', code: 'upstream_timeout', retryable: true },
  529: { status: 503, type: 'upstream_error', code: 'upstream_overloaded', retryable: true },
};

/** Anthropic's error `type` values and the HTTP status each comes with, for errors sent inside a stream. */
const statusByErrorType: Record<string, number> = {
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

const anthropicErrorBodySchema = z.object({
  error: z.object({ type: z.nullish(z.string()), message: z.nullish(z.string()) }),
});

/**
 * Maps an Anthropic error response (`{type:"error",error:{type,message}}`, or any text a proxy in between sent) to
 * a {@link GatewayError} that keeps Anthropic's message and body. Unlisted 5xx become retryable 502s, anything else
 * a non-retryable 502. `retry-after` is passed through whenever Anthropic sent one on a retryable status.
 */
export function mapAnthropicError(status: number, body: unknown, headers: Headers): GatewayError {
  const mapping = errorMappings[status] ?? {
    status: 502,
    type: 'upstream_error',
    code: 'upstream_error',
    retryable: status >= 500,
  };
  const retryAfter = headers.get('retry-after');
  return new GatewayError({
    ...mapping,
    message: anthropicErrorMessage(status, body),
    provider: 'anthropic',
    upstreamBody: body,
    headers: mapping.retryable && retryAfter !== null ? { 'retry-after': retryAfter } : undefined,
  });
}

/**
 * Maps the `error` event Anthropic sends mid-stream (`{type:"error",error:{type:"overloaded_error",...}}`) as if it
 * had been the HTTP response with that error type's status.
 */
export function mapAnthropicStreamError(data: unknown): GatewayError {
  const parsed = anthropicErrorBodySchema.safeParse(data);
  const errorType = parsed.success ? parsed.data.error.type : undefined;
  const status = (errorType === null || errorType === undefined ? undefined : statusByErrorType[errorType]) ?? 500;
  return mapAnthropicError(status, data, new Headers());
}

const maximumTextMessageLength = 1000;

function anthropicErrorMessage(status: number, body: unknown): string {
  const parsed = anthropicErrorBodySchema.safeParse(body);
  if (parsed.success && typeof parsed.data.error.message === 'string' && parsed.data.error.message.length > 0) {
    return parsed.data.error.message;
  }
  if (typeof body === 'string' && body.trim().length > 0) return body.trim().slice(0, maximumTextMessageLength);
  return `Anthropic returned HTTP ${status}.`;
}
