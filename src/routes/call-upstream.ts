import type { ProviderTranslator, UpstreamRequest } from '../canonical/provider-translator.ts';
import { GatewayError } from '../errors.ts';
import { parseJson } from '../framing/parse-json.ts';
import type { ResolvedDeployment } from '../routing/resolved-deployment.ts';
import type { GatewayServices, UpstreamResponse } from '../services.ts';
import type { RouteDependencies } from './gateway-context.ts';
import type { RequestRecord } from './request-record.ts';

/** How one upstream call is made. */
export interface UpstreamCall {
  services: GatewayServices;
  translator: ProviderTranslator;
  providerName: string;
  request: UpstreamRequest;
  /** The client's request signal: a client that goes away cancels the upstream call. */
  clientSignal: AbortSignal;
  /** Time allowed until response headers arrive. */
  timeoutMs: number;
  record: RequestRecord;
}

/**
 * Sends an upstream request and returns the successful Response with its body unread. Network failures become
 * 502 `upstream_unreachable`, header timeouts 504 `upstream_timeout`, client disconnects 499, and upstream error
 * statuses go through the translator's `mapError` with the upstream's message kept.
 */
export async function callUpstream(call: UpstreamCall): Promise<UpstreamResponse> {
  const { services, record, clientSignal } = call;
  const startedAt = services.now();
  record.calledUpstream = true;
  let response: UpstreamResponse;
  try {
    response = await services.upstreamFetch(call.request.url, {
      method: call.request.method,
      headers: call.request.headers,
      body: call.request.body ?? null,
      signal: clientSignal,
      headersTimeoutMs: call.timeoutMs,
    });
  } catch (error) {
    record.upstreamMs += services.now() - startedAt;
    throw upstreamFailure(error, clientSignal, call);
  }
  record.upstreamMs += services.now() - startedAt;
  if (response.ok) return response;
  const readStartedAt = services.now();
  const text = await response.text().catch(() => '');
  record.upstreamMs += services.now() - readStartedAt;
  const parsed = parseJson(text);
  const mapped = call.translator.mapError(response.status, parsed.ok ? parsed.value : text, response.headers);
  // Translators know their own id (`openai-compatible`); the config's provider name (`groq`) is what operators read.
  throw withProvider(mapped, call.providerName);
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
  if (error instanceof Error && error.name === 'TimeoutError') {
    return new GatewayError({
      status: 504,
      type: 'timeout_error',
      code: 'upstream_timeout',
      provider: call.providerName,
      retryable: true,
      message: `Upstream ${call.providerName} did not respond within ${call.timeoutMs} ms.`,
    });
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
    message: `Could not reach upstream ${call.providerName}: ${reason}`,
  });
}

/** Reads the rest of an upstream body as text, counting the time as upstream time. */
export async function readUpstreamText(
  response: UpstreamResponse,
  services: GatewayServices,
  record: RequestRecord,
): Promise<string> {
  const startedAt = services.now();
  try {
    return await response.text();
  } catch (error) {
    throw new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_body_interrupted',
      retryable: true,
      cause: error,
      message: 'The upstream connection broke while sending its response.',
    });
  } finally {
    record.upstreamMs += services.now() - startedAt;
  }
}

/** The same error, naming the config's provider instead of the translator id. */
export function withProvider(error: GatewayError, providerName: string): GatewayError {
  if (error.provider === providerName) return error;
  return new GatewayError({
    status: error.status,
    type: error.type,
    code: error.code,
    param: error.param,
    provider: providerName,
    retryable: error.retryable,
    upstreamBody: error.upstreamBody,
    message: error.message,
    cause: error.cause,
    ...(error.headers ? { headers: error.headers } : {}),
  });
}

/** {@link callUpstream} for a routed deployment, with the gateway's configured timeout. */
export function callDeployment(
  dependencies: RouteDependencies,
  deployment: ResolvedDeployment,
  request: UpstreamRequest,
  clientSignal: AbortSignal,
  record: RequestRecord,
): Promise<UpstreamResponse> {
  return callUpstream({
    services: dependencies.services,
    translator: deployment.translator,
    providerName: deployment.target.providerName,
    request,
    clientSignal,
    timeoutMs: dependencies.upstreamTimeoutMs,
    record,
  });
}
