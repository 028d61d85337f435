import type { Worker } from 'node:cluster';
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { describeResponseStoreConformance } from '../../tests/conformance/response-store-suite.ts';
import { createTestPglite } from '../../tests/services/test-database.ts';
import type { KeyStore } from '../../src/auth/key-store.ts';
import { createDrizzleResponseStore } from '../../src/db/drizzle-response-store.ts';
import type { ResponseStore } from '../../src/responses/response-store.ts';
import { createRemoteResponseStore, primaryHandlers } from './cluster-remote-services.ts';
import { serveClusterRpc, type ClusterRpcClient, type ClusterRpcHandlers } from './cluster-rpc.ts';

/** Node's IPC channel of a cluster (`serialization: 'json'`, the default): a message is what survives JSON. */
const overIpc = <Value>(message: Value): Value => JSON.parse(JSON.stringify(message)) as Value;

/**
 * A worker's RPC client and the primary's real {@link serveClusterRpc}, joined in this process by a fake worker
 * handle in place of the IPC channel; every message crosses it as JSON, as it would between processes.
 */
function inProcessRpc(handlers: ClusterRpcHandlers): ClusterRpcClient {
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const worker = Object.assign(new EventEmitter(), {
    isConnected: () => true,
    send(message: { id: number; ok: boolean; value?: unknown; error?: string }) {
      const result = overIpc(message);
      const waiting = pending.get(result.id);
      pending.delete(result.id);
      if (result.ok) waiting?.resolve(result.value);
      else waiting?.reject(new Error(result.error));
      return true;
    },
  });
  serveClusterRpc(worker as unknown as Worker, handlers);
  let nextId = 1;
  return {
    call<Result>(method: string, args: unknown[]) {
      const id = nextId++;
      return new Promise<Result>((resolve, reject) => {
        pending.set(id, { resolve: (value) => resolve(value as Result), reject });
        worker.emit('message', overIpc({ type: 'torii:rpc', id, method, args }));
      });
    },
    onBroadcast: () => () => {},
  };
}

/** The primary's handlers with `responseStore` and nothing else a test calls. */
function handlersFor(responseStore: ResponseStore): ClusterRpcHandlers {
  return primaryHandlers({ keyStore: {} as KeyStore, acceptUsage: () => {}, responseStore });
}

describeResponseStoreConformance('cluster worker, through the primary (drizzle on pglite)', async () => {
  const database = await createTestPglite();
  return {
    createStore: (now) =>
      createRemoteResponseStore(inProcessRpc(handlersFor(createDrizzleResponseStore(database.db, { now })))),
    close: () => database.drop(),
  };
});

describe('createRemoteResponseStore', () => {
  it('asks for the whole chain when maxLength is Infinity, which JSON cannot carry', async () => {
    const asked: unknown[] = [];
    const store = createRemoteResponseStore(
      inProcessRpc({
        'responses.chain': (id: string, maxLength: number) => {
          asked.push(id, maxLength);
          return [];
        },
      }),
    );
    expect(await store.chain('resp_1', Number.POSITIVE_INFINITY)).toEqual([]);
    expect(asked).toEqual(['resp_1', Number.MAX_SAFE_INTEGER]);
  });

  it('fails a call the primary fails, with its message', async () => {
    const store = createRemoteResponseStore(
      inProcessRpc(
        handlersFor({
          put: () => Promise.reject(new Error('database error 53100: disk full')),
          get: () => Promise.resolve(undefined),
          chain: () => Promise.resolve([]),
          delete: () => Promise.resolve(false),
        }),
      ),
    );
    await expect(store.get('resp_missing')).resolves.toBeUndefined();
    await expect(
      store.put({
        id: 'resp_1',
        keyId: null,
        modelGroup: 'fast',
        deploymentId: 'fast/0',
        native: true,
        previousResponseId: null,
        inputItems: [],
        response: null,
        createdAt: 0,
        expiresAt: 1,
      }),
    ).rejects.toThrow('database error 53100: disk full');
  });

  it('is served only by a primary given a response store', async () => {
    const store = createRemoteResponseStore(
      inProcessRpc(primaryHandlers({ keyStore: {} as KeyStore, acceptUsage: () => {} })),
    );
    await expect(store.get('resp_1')).rejects.toThrow('unknown method responses.get');
  });
});
