import { parseTraceParent } from '../observability/trace-context.ts';
import type { GatewayMetrics } from '../services.ts';
import type { RouteDependencies } from './gateway-context.ts';
import type { FailureRenderer } from './gateway-failure.ts';
import type { ModelReply } from './gateway-responses.ts';
import type { ModelRoute } from './handle-model-request.ts';
import type { ModelRequestSource } from './model-request-source.ts';
import { finishRequest } from './request-accounting.ts';
import { createRequestRecord } from './request-record.ts';
import { withTimingHeaders } from './timing-headers.ts';

/**
 * A model route served without a fetch Request, a Response or the Hono app around it: the whole request, from the
 * record to the request's end, with every failure already rendered in the client's envelope. The reply carries the
 * timing headers. The server must end the request once it has written the reply: `afterSend()` for a JSON or error
 * reply, `delivered()` after every step of a stream's pump (or `cancel()` when the client is gone).
 */
export type DirectModelRoute = (source: ModelRequestSource) => Promise<ModelReply>;

/** The gateway's model routes for a server that writes responses itself (the Node server's direct path). */
export interface DirectModelRoutes {
  /** The route serving a POST to `path` (no query string), or undefined: the Hono app serves everything else. */
  post(path: string): DirectModelRoute | undefined;
}

/**
 * Wraps the gateway's model routes for direct serving, doing for each request what the gateway's middleware and
 * error handler do on the Hono path: the record (and the client's `x-request-id`), the request count, the timing
 * headers, the failure's envelope, and the request's end when it is not a stream's.
 *
 * @example
 * const direct = createDirectModelRoutes(dependencies, { '/v1/chat/completions': chat }, renderFailure);
 * const reply = await direct.post('/v1/chat/completions')?.(source);
 */
export function createDirectModelRoutes(
  dependencies: RouteDependencies,
  routes: Readonly<Record<string, ModelRoute>>,
  renderFailure: FailureRenderer,
): DirectModelRoutes {
  const { now } = dependencies.services;
  const metrics: GatewayMetrics = dependencies.services.metrics;
  const tracing = dependencies.services.traces !== undefined;
  const direct = new Map<string, DirectModelRoute>();
  for (const [path, route] of Object.entries(routes)) {
    direct.set(path, async (source) => {
      const record = createRequestRecord(
        source.headers.get('x-request-id'),
        now(),
        dependencies.services.clockAdvancesDuringCompute !== false,
      );
      if (tracing) record.traceParent = parseTraceParent(source.headers.get('traceparent'));
      metrics.requestStarted();
      let reply: ModelReply;
      try {
        reply = await route(record, source);
      } catch (error) {
        reply = renderFailure(error, record);
      }
      if (!record.timingHeadersSent) withTimingHeaders(record, now(), reply.headers);
      // The request's end waits until the reply is with the client (the server calls afterSend right after writing
      // it): the bytes do not wait for the bookkeeping, and the next request on the connection still finds it done.
      if (!record.streamEndsRequest) {
        const status = reply.status;
        reply.afterSend = () => finishRequest(dependencies, record, status);
      }
      return reply;
    });
  }
  return { post: (path) => direct.get(path) };
}
