import type { ProviderTranslator, UpstreamRequest, UpstreamTarget } from '../canonical/provider-translator.ts';
import { GatewayError, upstreamError } from '../errors.ts';
import { parseJson } from '../framing/parse-json.ts';
import type { ResolvedDeployment } from '../routing/resolved-deployment.ts';
import type { SecretRedactor } from '../security/secret-redactor.ts';
import type { GatewayServices, UpstreamResponse } from '../services.ts';
import { isUpstreamLimitError } from '../upstream/upstream-limit-error.ts';
import type { UpstreamLimits } from '../upstream/upstream-limits.ts';
import type { RouteDependencies } from './gateway-context.ts';
import type { RequestRecord } from './request-record.ts';
import { sanitizedUpstreamError } from '../security/sanitized-upstream-error.ts';

/** How one upstream call is made. */
export interface UpstreamCall {
  services: GatewayServices;
  translator: ProviderTranslator;
  providerName: string;
  /** The deployment called, for a translator whose cached credentials the upstream rejects (see onCredentialsRejected). */
  target?: UpstreamTarget;
  request: UpstreamRequest;
  /** The client's request signal: a client that goes away cancels the upstream call. */
  clientSignal: AbortSignal;
  /** Timeouts and size caps of the call. */
  limits: UpstreamLimits;
  /** Removes the gateway's own secrets from what the upstream says before a client or a log sees it. */
  redactor: SecretRedactor;
  record: RequestRecord;
}

/**
 * Sends an upstream request and returns the successful Response with its body unread. Network failures become
 * 502 `upstream_unreachable`, header timeouts 504 `upstream_timeout`, client disconnects 499, and upstream error
 * statuses go through the translator's `mapError` with the upstream's message kept (its secrets redacted). An error
 * body is read up to `limits.maxErrorBodyBytes`; a larger one is reported without its message.
 */
export async function callUpstream(call: UpstreamCall): Promise<UpstreamResponse> {
  const { services, record, clientSignal, limits } = call;
  const startedAt = services.now();
  record.calledUpstream = true;
  // A deployment's total time: its signal aborts the call, body and stream included, when the time is up.
  const signal =
    limits.totalTimeoutMs === undefined
      ? clientSignal
      : AbortSignal.any([clientSignal, AbortSignal.timeout(limits.totalTimeoutMs)]);
  let response: UpstreamResponse;
  try {
    response = await services.upstreamFetch(call.request.url, {
      method: call.request.method,
      headers: call.request.headers,
      body: call.request.body ?? null,
      signal,
      headersTimeoutMs: limits.headersTimeoutMs,
      bodyTimeoutMs: limits.bodyTimeoutMs,
      ...(limits.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: limits.connectTimeoutMs }),
    });
  } catch (error) {
    record.upstreamMs += services.now() - startedAt;
    throw upstreamFailure(error, clientSignal, call);
  }
  record.upstreamMs += services.now() - startedAt;
  if (response.ok) return response;
  const readStartedAt = services.now();
  const text = await response.text(limits.maxErrorBodyBytes).catch(() => '');
  record.upstreamMs += services.now() - readStartedAt;
  const parsed = parseJson(text);
  if (response.status === 401 && call.target !== undefined) {
    try {
      call.translator.onCredentialsRejected?.(call.request, call.target);
    } catch {
      // A translator's cache clean-up must never turn an upstream error into a gateway crash.
    }
  }
  const mapped = call.translator.mapError(response.status, parsed.ok ? parsed.value : text, response.headers);
  throw sanitizedUpstreamError(mapped, call.providerName, call.redactor, response.status);
}

function upstreamFailure(error: unknown, clientSignal: AbortSignal, call: UpstreamCall): GatewayError {
  if (clientSignal.aborted) {
    return new GatewayError({
      status: 499,
      type: 'invalid_request_error',
      code: 'client_closed_request',
      message: 'The client closed the request.',
    });
  }
  if (isUpstreamLimitError(error) || isTimeoutError(error)) {
    const total = call.limits.totalTimeoutMs;
    return upstreamTimeout(
      call.providerName,
      isUpstreamLimitError(error) || total === undefined
        ? `Upstream ${call.providerName} did not respond within ${call.limits.headersTimeoutMs} ms.`
        : `Upstream ${call.providerName} did not finish within its total time of ${total} ms.`,
    );
  }
  const reason =
    error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_unreachable',
    provider: call.providerName,
    retryable: true,
    cause: error,
    message: call.redactor.redact(`Could not reach upstream ${call.providerName}: ${reason}`),
  });
}

/** The 504 of an upstream that took too long (retryable: another deployment may be faster). */
function upstreamTimeout(provider: string, message: string): GatewayError {
  return new GatewayError({
    status: 504,
    type: 'timeout_error',
    code: 'upstream_timeout',
    provider,
    retryable: true,
    message,
  });
}

/** A timeout's abort reason (`AbortSignal.timeout` rejects with a DOMException named `TimeoutError`). */
function isTimeoutError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'TimeoutError';
}

/**
 * The error for a failed read of an upstream body (a whole answer, or a stream when `streaming`): its size cap (502),
 * its body or idle timeout (504), or a broken connection (502).
 */
export function upstreamReadFailure(
  error: unknown,
  providerName: string,
  redactor: SecretRedactor,
  streaming = false,
): GatewayError {
  if (isUpstreamLimitError(error)) {
    if (error.limit === 'body-too-large')
      return upstreamError(
        'upstream_response_too_large',
        providerName,
        `Upstream ${providerName} sent an answer larger than ${error.value} bytes, the gateway's limit.`,
      );
    return upstreamTimeout(providerName, `Upstream ${providerName} ${error.message.replace(/^The upstream /, '')}`);
  }
  if (isTimeoutError(error)) {
    // The deployment's total time ran out while its answer was still coming (see callUpstream).
    return upstreamTimeout(
      providerName,
      `Upstream ${providerName} did not finish its answer within the deployment's total time.`,
    );
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: streaming ? 'upstream_stream_interrupted' : 'upstream_body_interrupted',
    provider: providerName,
    retryable: true,
    cause: error,
    message: redactor.redact(
      streaming
        ? `The upstream ${providerName} stream broke off: ${reason}`
        : `The upstream ${providerName} connection broke while sending its answer: ${reason}`,
    ),
  });
}

/** Reads the rest of an upstream body as text within the deployment's size cap, counting the time as upstream time. */
export async function readUpstreamText(
  response: UpstreamResponse,
  dependencies: Pick<RouteDependencies, 'services' | 'redactor'>,
  deployment: ResolvedDeployment,
  record: RequestRecord,
): Promise<string> {
  const { services } = dependencies;
  const startedAt = services.now();
  try {
    return await response.text(deployment.limits.maxBodyBytes);
  } catch (error) {
    throw upstreamReadFailure(error, deployment.target.providerName, dependencies.redactor);
  } finally {
    record.upstreamMs += services.now() - startedAt;
  }
}

/** {@link callUpstream} for a routed deployment, with its limits and the gateway's secret redactor. */
export function callDeployment(
  dependencies: Pick<RouteDependencies, 'services' | 'redactor'>,
  deployment: ResolvedDeployment,
  request: UpstreamRequest,
  clientSignal: AbortSignal,
  record: RequestRecord,
): Promise<UpstreamResponse> {
  return callUpstream({
    services: dependencies.services,
    translator: deployment.translator,
    providerName: deployment.target.providerName,
    target: deployment.target,
    request,
    clientSignal,
    limits: deployment.limits,
    redactor: dependencies.redactor,
    record,
  });
}
