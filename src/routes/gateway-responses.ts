import { GatewayError } from '../errors.ts';
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
