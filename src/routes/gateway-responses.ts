import { GatewayError, openAIErrorBody } from '../errors.ts';
import type { RouteDependencies } from './gateway-context.ts';
import type { RequestRecord } from './request-record.ts';
import { sseResponseHeaders } from './stream-response.ts';
import { withTimingHeaders } from './timing-headers.ts';

/** A successful JSON response carrying the request's timing headers. */
export function jsonResponse(dependencies: RouteDependencies, record: RequestRecord, body: string): Response {
  return new Response(body, {
    status: 200,
    headers: withTimingHeaders(record, dependencies.services.now(), { 'content-type': 'application/json' }),
  });
}

/** A successful Server-Sent Events response carrying the request's timing headers. */
export function eventStreamResponse(
  dependencies: RouteDependencies,
  record: RequestRecord,
  stream: ReadableStream<Uint8Array>,
): Response {
  return new Response(stream, {
    status: 200,
    headers: withTimingHeaders(record, dependencies.services.now(), { ...sseResponseHeaders }),
  });
}

/** The 502 for an upstream that answered 2xx with a body that is not JSON. */
export function invalidUpstreamBody(provider: string, reason: string): GatewayError {
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_invalid_response',
    provider,
    message: `Upstream ${provider} sent a response that is not JSON: ${reason}`,
  });
}

const textEncoder = new TextEncoder();

/** The OpenAI stream event for an upstream stream that broke off: `data: {"error":{...}}`. */
export function openAIStreamBreakEvent(provider: string): (error: unknown) => Uint8Array {
  return (error) => {
    const reason = error instanceof Error ? error.message : String(error);
    const gatewayError = new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_stream_interrupted',
      provider,
      retryable: true,
      message: `The upstream ${provider} stream broke off: ${reason}`,
    });
    return textEncoder.encode(`data: ${JSON.stringify(openAIErrorBody(gatewayError))}\n\n`);
  };
}
