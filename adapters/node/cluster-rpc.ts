import type { Worker } from 'node:cluster';
import type {
  ClusterBroadcastChannel,
  ClusterBroadcasts,
  ClusterMethod,
  ClusterMethods,
  OptionalClusterMethod,
} from './cluster-methods.ts';

/** A call as it crosses the channel; `method` and `args` are checked against {@link ClusterMethods} when sent. */
interface RpcRequest {
  type: 'torii:rpc';
  id: number;
  method: string;
  args: readonly unknown[];
}

/** The answer to the call of the same id: its value, or its error's message. */
interface RpcResult {
  type: 'torii:rpc-result';
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

/** A broadcast as it crosses the channel. */
interface RpcBroadcast<Channel extends ClusterBroadcastChannel> {
  type: 'torii:broadcast';
  channel: Channel;
  payload: ClusterBroadcasts[Channel];
}

/** What a worker receives for a call of `Method`. */
export type ClusterMethodResult<Method extends ClusterMethod> = Awaited<ReturnType<ClusterMethods[Method]>>;

/** The primary's handler of `Method`: its arguments, and its result or a promise of it. */
export type ClusterMethodHandler<Method extends ClusterMethod> = (
  ...args: Parameters<ClusterMethods[Method]>
) => ClusterMethodResult<Method> | Promise<ClusterMethodResult<Method>>;

/** A handler for every method of {@link ClusterMethods}: one missing, or of the wrong type, is a compile error. */
export type ClusterRpcHandlers = { [Method in ClusterMethod]: ClusterMethodHandler<Method> };

/**
 * What one primary serves: every method, except that those of {@link OptionalClusterMethod} are there only when the
 * primary holds what they need (the others missing is a compile error). A call of a method it does not serve is
 * answered "unknown method".
 */
export type ServedClusterRpcHandlers = Omit<ClusterRpcHandlers, OptionalClusterMethod> &
  Partial<Pick<ClusterRpcHandlers, OptionalClusterMethod>>;

/** A worker's end of the RPC channel to the cluster primary. */
export interface ClusterRpcClient {
  /** Calls a method the primary serves; rejects with the handler's error message, or when it does not answer. */
  call<Method extends ClusterMethod>(
    method: Method,
    args: Parameters<ClusterMethods[Method]>,
  ): Promise<ClusterMethodResult<Method>>;
  /** Listens to what the primary broadcasts on a channel; returns unsubscribe. */
  onBroadcast<Channel extends ClusterBroadcastChannel>(
    channel: Channel,
    listener: (payload: ClusterBroadcasts[Channel]) => void,
  ): () => void;
}

/** A worker's end of the IPC channel to its primary: `process` in a cluster worker (a fake in tests). */
export interface PrimaryChannel {
  readonly connected: boolean;
  send?(message: unknown, sendHandle: undefined, options: object, callback: (error: Error | null) => void): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

/** The primary's handle on one worker: a cluster `Worker` (a fake in tests). */
export interface WorkerChannel {
  isConnected(): boolean;
  send(message: unknown): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

const callTimeoutMs = 30_000;

/**
 * The worker side of the cluster RPC: calls go to the primary over the IPC channel the cluster module set up
 * and are answered by id. A call the primary does not answer within 30 s fails (the caller decides what that
 * means: the key lookup answers 503, the usage queue retries).
 *
 * @example
 * const rpc = createClusterRpcClient();
 * const record = await rpc.call('keys.findByHash', [hash]);
 */
export function createClusterRpcClient(primary: PrimaryChannel = process): ClusterRpcClient {
  let nextId = 1;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  primary.on('message', (message: unknown) => {
    const typed = message as
      | (Partial<Omit<RpcResult, 'type'> & Omit<RpcBroadcast<ClusterBroadcastChannel>, 'type'>> & { type?: string })
      | null;
    if (typed?.type === 'torii:rpc-result' && typeof typed.id === 'number') {
      const waiting = pending.get(typed.id);
      if (waiting === undefined) return;
      pending.delete(typed.id);
      if (typed.ok) waiting.resolve(typed.value);
      else waiting.reject(new Error(typed.error ?? 'cluster primary call failed'));
    } else if (typed?.type === 'torii:broadcast' && typeof typed.channel === 'string') {
      for (const listener of listeners.get(typed.channel) ?? []) listener(typed.payload);
    }
  });
  return {
    call<Method extends ClusterMethod>(
      method: Method,
      args: Parameters<ClusterMethods[Method]>,
    ): Promise<ClusterMethodResult<Method>> {
      return new Promise<ClusterMethodResult<Method>>((resolve, reject) => {
        if (primary.send === undefined || !primary.connected) {
          reject(new Error('not connected to a cluster primary'));
          return;
        }
        const id = nextId++;
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`cluster primary did not answer ${method} within ${callTimeoutMs} ms`));
        }, callTimeoutMs);
        timer.unref();
        pending.set(id, {
          // The primary answers each method with its declared result (serveClusterRpc takes typed handlers).
          resolve: (value) => {
            clearTimeout(timer);
            resolve(value as ClusterMethodResult<Method>);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
        primary.send({ type: 'torii:rpc', id, method, args } satisfies RpcRequest, undefined, {}, (error) => {
          if (error === null || error === undefined) return;
          pending.delete(id);
          clearTimeout(timer);
          reject(error);
        });
      });
    },
    onBroadcast<Channel extends ClusterBroadcastChannel>(
      channel: Channel,
      listener: (payload: ClusterBroadcasts[Channel]) => void,
    ): () => void {
      let set = listeners.get(channel);
      if (set === undefined) {
        set = new Set();
        listeners.set(channel, set);
      }
      // The primary sends each channel its declared payload (broadcastToWorkers is typed by channel).
      const deliver = (payload: unknown) => listener(payload as ClusterBroadcasts[Channel]);
      set.add(deliver);
      return () => set.delete(deliver);
    },
  };
}

/** The handler `handlers` has for a method named on the wire, or undefined (a name that is not its own key too). */
function handlerFor(handlers: ServedClusterRpcHandlers, method: string): ((...args: unknown[]) => unknown) | undefined {
  if (!Object.hasOwn(handlers, method)) return undefined;
  return (handlers as Partial<Record<string, (...args: unknown[]) => unknown>>)[method];
}

/**
 * The primary side: answers one worker's calls with `handlers`. Errors are passed back as their message; a method
 * `handlers` does not serve is answered "unknown method <name>".
 *
 * @example
 * serveClusterRpc(worker, primaryHandlers(services));
 */
export function serveClusterRpc(worker: WorkerChannel, handlers: ServedClusterRpcHandlers): void {
  worker.on('message', (message: unknown) => {
    const request = message as Partial<RpcRequest> | null;
    if (request?.type !== 'torii:rpc' || typeof request.id !== 'number' || typeof request.method !== 'string') return;
    const id = request.id;
    const handler = handlerFor(handlers, request.method);
    const answer = (result: RpcResult): void => {
      if (worker.isConnected()) worker.send(result);
    };
    if (handler === undefined) {
      answer({ type: 'torii:rpc-result', id, ok: false, error: `unknown method ${request.method}` });
      return;
    }
    Promise.resolve()
      .then(() => handler(...(request.args ?? [])))
      .then(
        (value) => answer({ type: 'torii:rpc-result', id, ok: true, value: value ?? null }),
        (error: unknown) =>
          answer({
            type: 'torii:rpc-result',
            id,
            ok: false,
            error: error instanceof Error ? error.message : String(error),
          }),
      );
  });
}

/** Sends a broadcast to every live worker of the cluster. */
export function broadcastToWorkers<Channel extends ClusterBroadcastChannel>(
  workers: Iterable<Worker>,
  channel: Channel,
  payload: ClusterBroadcasts[Channel],
): void {
  for (const worker of workers) {
    if (worker.isConnected())
      worker.send({ type: 'torii:broadcast', channel, payload } satisfies RpcBroadcast<Channel>);
  }
}
