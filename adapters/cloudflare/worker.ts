import { ConfigError } from '../../src/config/config-error.ts';
import { GatewayError, renderError } from '../../src/errors.ts';
import { jsonLogLine } from '../../src/observability/json-logger.ts';
import type { WorkersQueueBatch } from './queue-usage-consumer.ts';
import type { WorkerEnvironment } from './worker-environment.ts';
import { buildWorkerGateway, type WorkerGateway } from './worker-gateway.ts';
import { runInInvocation, type WorkerExecutionContext } from './worker-request-scope.ts';

export { ToriiCircuits } from './circuits-durable-object.ts';
export { ToriiKeyCounters } from './key-counters-durable-object.ts';
export type { WorkerEnvironment } from './worker-environment.ts';
export type { WorkerExecutionContext } from './worker-request-scope.ts';

/** The isolate's gateway, built at the first invocation and rebuilt only if the bindings object changes. */
let cached: { environment: WorkerEnvironment; gateway: Promise<WorkerGateway>; ready?: WorkerGateway } | undefined;

function gatewayFor(environment: WorkerEnvironment): Promise<WorkerGateway> | WorkerGateway {
  if (cached?.environment === environment) return cached.ready ?? cached.gateway;
  const entry: NonNullable<typeof cached> = { environment, gateway: buildWorkerGateway(environment) };
  cached = entry;
  entry.gateway.then(
    (gateway) => (entry.ready = gateway),
    () => {
      // A bad config is reported to every request until it is fixed; the next invocation tries again.
      if (cached === entry) cached = undefined;
    },
  );
  return entry.gateway;
}

function configFailure(error: unknown): Response {
  const message = error instanceof ConfigError ? error.message : 'The gateway could not start.';
  console.error(
    jsonLogLine(Date.now(), 'error', message, error instanceof ConfigError ? undefined : { error: String(error) }),
  );
  return renderError(new GatewayError({ status: 500, type: 'api_error', code: 'invalid_config', message }), 'openai');
}

function serve(
  gateway: WorkerGateway,
  request: Request,
  environment: WorkerEnvironment,
  context: WorkerExecutionContext,
): Response | Promise<Response> {
  const { accounting, app, circuits } = gateway;
  if (accounting !== undefined) {
    return accounting.handle(context, () => {
      circuits?.refreshIfDue();
      return app.fetch(request, environment, context as never);
    });
  }
  if (circuits === undefined) return app.fetch(request, environment, context as never);
  return runInInvocation(context, () => {
    circuits.refreshIfDue();
    return app.fetch(request, environment, context as never);
  });
}

/**
 * The Cloudflare Workers entry: the same gateway app, built once per isolate from the Worker's bindings
 * (worker-gateway.ts), and the consumer of the usage Queue. A config error answers 500 with the problems listed (it
 * is the operator's error, not the client's). `ToriiKeyCounters` is the Durable Object class of the shared limits and
 * budgets, `ToriiCircuits` the one of the shared circuit breakers; wrangler.toml binds both.
 */
export default {
  fetch(
    request: Request,
    environment: WorkerEnvironment,
    context: WorkerExecutionContext,
  ): Response | Promise<Response> {
    const gateway = gatewayFor(environment);
    if (!(gateway instanceof Promise)) return serve(gateway, request, environment, context);
    return gateway.then((built) => serve(built, request, environment, context), configFailure);
  },

  async queue(batch: WorkersQueueBatch, environment: WorkerEnvironment, context: WorkerExecutionContext) {
    const { accounting } = await gatewayFor(environment);
    if (accounting === undefined) {
      // Not acknowledged: the messages are delivered again, then kept by the dead-letter queue.
      throw new Error('usage messages arrived, but no database is bound (HYPERDRIVE or DATABASE_URL)');
    }
    await accounting.consumeUsage(batch, context);
  },
};
