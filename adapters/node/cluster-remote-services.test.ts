import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { describeResponseStoreConformance } from '../../tests/conformance/response-store-suite.ts';
import { createTestPglite } from '../../tests/services/test-database.ts';
import type { KeyStore } from '../../src/auth/key-store.ts';
import { createDrizzleResponseStore } from '../../src/db/drizzle-response-store.ts';
import type { ResponseStore } from '../../src/responses/response-store.ts';
import type { UsageQuery } from '../../src/usage/usage-query.ts';
import { createRemoteResponseStore, primaryHandlers } from './cluster-remote-services.ts';
import {
  createClusterRpcClient,
  serveClusterRpc,
  type ClusterRpcClient,
  type ServedClusterRpcHandlers,
} from './cluster-rpc.ts';

/** Node's IPC channel of a cluster (`serialization: 'json'`, the default): a message is what survives JSON. */
const overIpc = <Value>(message: Value): Value => JSON.parse(JSON.stringify(message)) as Value;

/**
 * A worker's real RPC client and the primary's real {@link serveClusterRpc}, joined in this process by a fake worker
 * process and a fake worker handle in place of the IPC channel; every message crosses it as JSON, as it would between
 * processes.
 */
function inProcessRpc(handlers: ServedClusterRpcHandlers): ClusterRpcClient {
  const workerProcess = Object.assign(new EventEmitter(), {
    connected: true,
    send(message: unknown, _handle: undefined, _options: object, callback: (error: Error | null) => void) {
      worker.emit('message', overIpc(message));
      callback(null);
      return true;
    },
  });
  const worker = Object.assign(new EventEmitter(), {
    isConnected: () => true,
    send(message: unknown) {
      workerProcess.emit('message', overIpc(message));
      return true;
    },
  });
  serveClusterRpc(worker, handlers);
  return createClusterRpcClient(workerProcess);
}

/** The primary's handlers with `responseStore` and nothing else a test calls. */
function handlersFor(responseStore: ResponseStore): ServedClusterRpcHandlers {
  return primaryHandlers({
    keyStore: {} as KeyStore,
    usageQuery: {} as UsageQuery,
    acceptUsage: () => {},
    responseStore,
  });
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
      inProcessRpc(
        handlersFor({
          put: () => Promise.resolve(),
          get: () => Promise.resolve(undefined),
          chain: (id, maxLength) => {
            asked.push(id, maxLength);
            return Promise.resolve([]);
          },
          delete: () => Promise.resolve(false),
        }),
      ),
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
      inProcessRpc(primaryHandlers({ keyStore: {} as KeyStore, usageQuery: {} as UsageQuery, acceptUsage: () => {} })),
    );
    await expect(store.get('resp_1')).rejects.toThrow('unknown method responses.get');
  });
});
