import { AsyncLocalStorage } from 'node:async_hooks';

/** The part of the Workers `ExecutionContext` the gateway uses. */
export interface WorkerExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
}

/** The invocation (a `fetch` or a `queue` batch) whose `waitUntil` keeps background work alive. */
const currentInvocation = new AsyncLocalStorage<WorkerExecutionContext>();

/**
 * Runs `work` as part of the invocation `context`: background work started anywhere below it (a database connection
 * closing, a Durable Object call of the rate limiter, a usage send) is handed to this invocation's `waitUntil` by
 * {@link keepAlive}. workerd carries the scope through promises, timers and the callbacks of streams created inside
 * it, so work that runs when a streamed response ends still finds the request it belongs to.
 *
 * @example
 * ```ts
 * fetch(request, env, context) {
 *   return runInInvocation(context, () => app.fetch(request, env, context));
 * }
 * ```
 */
export function runInInvocation<Result>(context: WorkerExecutionContext, work: () => Result): Result {
  return currentInvocation.run(context, work);
}

/**
 * Hands `work` to the current invocation's `waitUntil`, so workerd does not cancel it when the response is sent (and
 * the invocation stays alive, up to 30 s after the response, until it settles); answers `work` itself. Outside any
 * invocation (unit tests in Node) it only answers `work`. A rejection is still the caller's to handle.
 */
export function keepAlive<Value>(work: Promise<Value>): Promise<Value> {
  const context = currentInvocation.getStore();
  if (context !== undefined) context.waitUntil(work.catch(() => {}));
  return work;
}
