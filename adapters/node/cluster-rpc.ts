import type { Worker } from 'node:cluster';

interface RpcRequest {
  type: 'torii:rpc';
  id: number;
  method: string;
  args: unknown[];
}

interface RpcResult {
  type: 'torii:rpc-result';
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

interface RpcBroadcast {
  type: 'torii:broadcast';
  channel: string;
  payload: unknown;
}

/** Methods the primary serves to its workers; each takes JSON-serialisable arguments. */
export type ClusterRpcHandlers = Record<string, (...args: never[]) => Promise<unknown> | unknown>;

/** A worker's end of the RPC channel to the cluster primary. */
export interface ClusterRpcClient {
  call<Result>(method: string, args: unknown[]): Promise<Result>;
  /** Listens to what the primary broadcasts on a channel; returns unsubscribe. */
  onBroadcast(channel: string, listener: (payload: unknown) => void): () => void;
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
export function createClusterRpcClient(): ClusterRpcClient {
  let nextId = 1;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  process.on('message', (message: unknown) => {
    const typed = message as (Partial<Omit<RpcResult, 'type'> & Omit<RpcBroadcast, 'type'>> & { type?: string }) | null;
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
    call<Result>(method: string, args: unknown[]): Promise<Result> {
      return new Promise<Result>((resolve, reject) => {
        if (process.send === undefined || !process.connected) {
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
          resolve: (value) => {
            clearTimeout(timer);
            resolve(value as Result);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
        process.send({ type: 'torii:rpc', id, method, args } satisfies RpcRequest, undefined, {}, (error) => {
          if (error === null || error === undefined) return;
          pending.delete(id);
          clearTimeout(timer);
          reject(error);
        });
      });
    },
    onBroadcast(channel, listener) {
      let set = listeners.get(channel);
      if (set === undefined) {
        set = new Set();
        listeners.set(channel, set);
      }
      set.add(listener);
      return () => set.delete(listener);
    },
  };
}

/**
 * The primary side: answers one worker's calls with `handlers`. Errors are passed back as their message.
 *
 * @example
 * serveClusterRpc(worker, { 'keys.findByHash': (hash: string) => store.findByHash(hash) });
 */
export function serveClusterRpc(worker: Worker, handlers: ClusterRpcHandlers): void {
  worker.on('message', (message: unknown) => {
    const request = message as Partial<RpcRequest> | null;
    if (request?.type !== 'torii:rpc' || typeof request.id !== 'number' || typeof request.method !== 'string') return;
    const id = request.id;
    const handler = handlers[request.method];
    const answer = (result: RpcResult): void => {
      if (worker.isConnected()) worker.send(result);
    };
    if (handler === undefined) {
      answer({ type: 'torii:rpc-result', id, ok: false, error: `unknown method ${request.method}` });
      return;
    }
    Promise.resolve()
      .then(() => (handler as (...args: unknown[]) => unknown)(...(request.args ?? [])))
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

/** Sends a message to every live worker of the cluster. */
export function broadcastToWorkers(workers: Iterable<Worker>, channel: string, payload: unknown): void {
  for (const worker of workers) {
    if (worker.isConnected()) worker.send({ type: 'torii:broadcast', channel, payload } satisfies RpcBroadcast);
  }
}
