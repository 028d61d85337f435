import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { VirtualKeyRecord } from '../../src/auth/virtual-key-record.ts';
import {
  createClusterRpcClient,
  serveClusterRpc,
  type ClusterRpcClient,
  type ServedClusterRpcHandlers,
} from './cluster-rpc.ts';

/** Node's IPC channel of a cluster (`serialization: 'json'`, the default): a message is what survives JSON. */
const overIpc = <Value>(message: Value): Value => JSON.parse(JSON.stringify(message)) as Value;

/**
 * A worker process and the primary's handle on it, faked with two EventEmitters joined as the IPC channel joins them:
 * what one sends, the other receives on the next turn, as JSON. Returns the worker's real client, served by the
 * primary's real {@link serveClusterRpc}, and every request the primary received.
 */
function fakeCluster(handlers: ServedClusterRpcHandlers): { rpc: ClusterRpcClient; requests: unknown[] } {
  const requests: unknown[] = [];
  const workerProcess = Object.assign(new EventEmitter(), {
    connected: true,
    send(message: unknown, _handle: undefined, _options: object, callback: (error: Error | null) => void) {
      requests.push(overIpc(message));
      setImmediate(() => worker.emit('message', overIpc(message)));
      callback(null);
      return true;
    },
  });
  const worker = Object.assign(new EventEmitter(), {
    isConnected: () => true,
    send(message: unknown) {
      setImmediate(() => workerProcess.emit('message', overIpc(message)));
      return true;
    },
  });
  serveClusterRpc(worker, handlers);
  return { rpc: createClusterRpcClient(workerProcess), requests };
}

const record = { id: 'key_1', name: 'first' } as VirtualKeyRecord;

/** Every method a primary always serves, each failing the test if called, with `overrides` in their place. */
function handlers(overrides: Partial<ServedClusterRpcHandlers>): ServedClusterRpcHandlers {
  const unexpected = () => {
    throw new Error('not called in this test');
  };
  return {
    'keys.findByHash': unexpected,
    'keys.findManyByHash': unexpected,
    'keys.findById': unexpected,
    'keys.create': unexpected,
    'keys.update': unexpected,
    'keys.revoke': unexpected,
    'keys.rotate': unexpected,
    'keys.list': unexpected,
    'keys.publishInvalidation': unexpected,
    'usage.accept': unexpected,
    'usage.summarize': unexpected,
    'usage.spendByKey': unexpected,
    ...overrides,
  };
}

describe('the cluster RPC (createClusterRpcClient and serveClusterRpc)', () => {
  it('answers each call by id, fails an unknown method by name, and passes on a handler’s error', async () => {
    let releaseSlow: () => void = () => {};
    const { rpc, requests } = fakeCluster(
      handlers({
        // Answers after the next call: the answers cross, and each still reaches its own call.
        'keys.findByHash': (hash) =>
          new Promise((resolve) => {
            releaseSlow = () => resolve(hash === 'hash_1' ? record : null);
          }),
        'keys.findById': (id) => (id === 'key_1' ? record : null),
        'usage.summarize': () => {
          throw new Error('database error 57014: canceling statement due to statement timeout');
        },
      }),
    );

    const slow = rpc.call('keys.findByHash', ['hash_1']);
    const fast = rpc.call('keys.findById', ['key_2']);
    await expect(fast).resolves.toBeNull();
    releaseSlow();
    await expect(slow).resolves.toEqual(record);
    expect(requests).toEqual([
      { type: 'torii:rpc', id: 1, method: 'keys.findByHash', args: ['hash_1'] },
      { type: 'torii:rpc', id: 2, method: 'keys.findById', args: ['key_2'] },
    ]);

    // A method this primary does not serve (it has no shared cache: Redis holds it).
    await expect(rpc.call('cache.get', ['budget:key_1'])).rejects.toThrow('unknown method cache.get');
    // @ts-expect-error -- a misspelt method is a compile error; a worker built apart from its primary hears this.
    await expect(rpc.call('keys.findByHsh', ['hash_1'])).rejects.toThrow('unknown method keys.findByHsh');

    await expect(rpc.call('usage.summarize', [{ from: 0, to: 1 }])).rejects.toThrow(
      'database error 57014: canceling statement due to statement timeout',
    );
  });

  it('types every method on both sides (compile-time checks)', () => {
    const { rpc } = fakeCluster(handlers({}));
    const unused = () => {
      // @ts-expect-error -- a wrong argument is a compile error.
      void rpc.call('keys.findById', [42]);
      // @ts-expect-error -- so is a missing one.
      void rpc.call('cache.set', ['key', 'value']);
      // @ts-expect-error -- and a result read as what it is not.
      const count: Promise<number> = rpc.call('responses.delete', ['resp_1']);
      // @ts-expect-error -- a broadcast listener gets its channel's payload.
      rpc.onBroadcast('usage.ledger', (payload: { hashes: string[] }) => payload);
      // @ts-expect-error -- a handler must answer its method's result...
      handlers({ 'keys.findById': () => 'key_1' });
      // @ts-expect-error -- ...and a primary must serve every method it always serves.
      const partial: ServedClusterRpcHandlers = { 'keys.findByHash': () => null };
      return [count, partial];
    };
    expect(unused).toBeTypeOf('function');
  });
});
