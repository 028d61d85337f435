import type { AuthContext } from '../auth/authenticator.ts';
import type { CancellableTransformer } from '../framing/stream-end.ts';
import type { ResolvedDeployment } from '../routing/resolved-deployment.ts';
import type { RouteDependencies } from './gateway-context.ts';
import type { RequestRecord } from './request-record.ts';

/** What a lifecycle step knows about the request. */
export interface LifecycleContext {
  dependencies: RouteDependencies;
  auth: AuthContext;
  record: RequestRecord;
}

/** How a lifecycle wants a request routed. */
export interface RouteChoice {
  /** A deployment of the requested group to use instead of a weighted pick (the one a conversation lives on). */
  deploymentId?: string;
  /** Translate even when the deployment serves the dialect natively (the conversation is kept by the gateway). */
  translate?: boolean;
}

/** What the upstream gave, when a lifecycle settles a request. */
export interface SettleContext extends LifecycleContext {
  deployment: ResolvedDeployment;
  /** Whether the request was passed through (same dialect) rather than translated. */
  native: boolean;
  /** A same-dialect JSON answer's text, as the client gets it. */
  nativeAnswer?: string;
}

/**
 * Per-dialect steps around the one model-request pipeline, for client APIs that keep state between requests (the
 * Responses API's stored conversations): before routing (load the conversation, pick the deployment it lives on) and
 * after the answer (store it). Stateless dialects have none.
 *
 * `settle` runs after a JSON answer is ready and, on streams, after every piece of upstream output; when it returns
 * a promise, the client gets nothing more until it settles, so a client that reads the end of an answer and sends
 * the next request at once finds the answer stored. It must be idempotent: it returns undefined once there is
 * nothing (more) to do.
 */
export interface ModelRequestLifecycle<Request> {
  beforeRoute?(request: Request, context: LifecycleContext): RouteChoice | undefined | Promise<RouteChoice | undefined>;
  settle?(request: Request, context: SettleContext): Promise<void> | undefined;
}

/**
 * Wraps a stream transformer so that, after each piece of input and at the end, `settle` is asked whether output
 * must wait (a store write the end of the answer depends on), and the output is held until it has settled.
 */
export function settlingTransformer(
  inner: CancellableTransformer<Uint8Array, Uint8Array>,
  settle: () => Promise<void> | undefined,
): CancellableTransformer<Uint8Array, Uint8Array> {
  const held = (
    controller: TransformStreamDefaultController<Uint8Array>,
    step: (collector: TransformStreamDefaultController<Uint8Array>) => void | PromiseLike<void>,
  ): void | Promise<void> => {
    const chunks: Uint8Array[] = [];
    let terminated = false;
    const collector = {
      desiredSize: controller.desiredSize,
      enqueue: (chunk: Uint8Array) => chunks.push(chunk),
      terminate: () => (terminated = true),
      error: (reason: unknown) => controller.error(reason),
    } as unknown as TransformStreamDefaultController<Uint8Array>;
    const release = (): void => {
      for (const chunk of chunks) controller.enqueue(chunk);
      if (terminated) controller.terminate();
    };
    const afterStep = (): void | Promise<void> => {
      const waiting = settle();
      if (waiting === undefined) return release();
      return waiting.then(release);
    };
    const stepped = step(collector);
    return stepped instanceof Promise ? stepped.then(afterStep) : afterStep();
  };
  return {
    transform: (chunk, controller) => held(controller, (collector) => inner.transform?.(chunk, collector)),
    flush: (controller) => held(controller, (collector) => inner.flush?.(collector)),
    cancel: (reason) => inner.cancel?.(reason),
  };
}
