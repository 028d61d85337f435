import type { KeyInvalidation, KeyInvalidationBus } from '../../src/auth/key-invalidation.ts';
import type { KeyStore, VirtualKeyPage } from '../../src/auth/key-store.ts';
import { createKeyStoreLookupBatcher, type KeyStoreLookupLimits } from '../../src/auth/key-store-lookup-batcher.ts';
import type { VirtualKeyRecord } from '../../src/auth/virtual-key-record.ts';
import type { KeyValueCache } from '../../src/cache/key-value-cache.ts';
import { GatewayError, isGatewayError, type GatewayErrorInit } from '../../src/errors.ts';
import type { LimitLease, LimitStore } from '../../src/limits/limit-store.ts';
import type { ResponseStore, StoredResponse } from '../../src/responses/response-store.ts';
import type { UsageEvent, UsageSink } from '../../src/usage/usage-event.ts';
import type { ClusterRpcClient, ClusterRpcHandlers } from './cluster-rpc.ts';

/**
 * In cluster mode the primary owns the database (PGlite allows one process per directory, and one pool per host
 * keeps Postgres connections at a handful instead of workers x pool size) and, when no Redis is configured, the
 * shared state: the key cache, the rate-limit counters and the invalidation relay. Workers reach them through
 * these seam implementations over the cluster IPC channel; the primary serves them with {@link primaryHandlers}.
 */

const orUndefined = <Value>(value: Value | null): Value | undefined => (value === null ? undefined : value);

/**
 * A {@link GatewayError} the primary's key store threw (a 400 for a cursor it did not make, say), as it crosses the
 * IPC channel: the RPC carries only an error's message, which would turn the client's 400 into a 500.
 */
interface KeyStoreRefusal {
  keyStoreRefusal: GatewayErrorInit;
}

const isKeyStoreRefusal = (value: unknown): value is KeyStoreRefusal =>
  typeof value === 'object' && value !== null && 'keyStoreRefusal' in value;

/** Answers a key-store call, passing a {@link GatewayError} on as a value the worker throws again. */
async function refusalsAsValues(call: () => Promise<unknown>): Promise<unknown> {
  try {
    return await call();
  } catch (error) {
    if (!isGatewayError(error)) throw error;
    const { status, type, code, param, message, retryable, headers } = error;
    return {
      keyStoreRefusal: { status, type, code, param, message, retryable, ...(headers === undefined ? {} : { headers }) },
    } satisfies KeyStoreRefusal;
  }
}

/** KeyStore whose calls the primary answers. */
export function createRemoteKeyStore(rpc: ClusterRpcClient): KeyStore {
  const answer = async <Result>(method: string, args: unknown[]): Promise<Result> => {
    const value = await rpc.call<Result | KeyStoreRefusal>(`keys.${method}`, args);
    if (isKeyStoreRefusal(value)) throw new GatewayError(value.keyStoreRefusal);
    return value;
  };
  const record = async (method: string, args: unknown[]) =>
    orUndefined(await answer<VirtualKeyRecord | null>(method, args));
  return {
    findByHash: (hash) => record('findByHash', [hash]),
    findManyByHash: (hashes) => answer<VirtualKeyRecord[]>('findManyByHash', [hashes]),
    findById: (id) => record('findById', [id]),
    create: async (key) => (await record('create', [key]))!,
    update: (id, changes) => record('update', [id, changes]),
    revoke: (id) => record('revoke', [id]),
    rotate: (id, replacement) => record('rotate', [id, replacement]),
    list: (options) => answer<VirtualKeyPage>('list', [options]),
  };
}

/** UsageSink that hands batches to the primary's usage queue (which writes, retries and spills them). */
export function createRemoteUsageSink(rpc: ClusterRpcClient): UsageSink {
  return { write: async (events) => void (await rpc.call('usage.accept', [events])) };
}

/** The primary's shared cache (used when there is no Redis). */
export function createRemoteKeyValueCache(rpc: ClusterRpcClient): KeyValueCache {
  return {
    get: async (key) => orUndefined(await rpc.call<string | null>('cache.get', [key])),
    set: async (key, value, options) => void (await rpc.call('cache.set', [key, value, options])),
    setIfAbsent: (key, value, options) => rpc.call<boolean>('cache.setIfAbsent', [key, value, options]),
    delete: async (key) => void (await rpc.call('cache.delete', [key])),
  };
}

/** The primary's rate-limit counters (used when there is no Redis): workers lease slices from them. */
export function createRemoteLimitStore(rpc: ClusterRpcClient): LimitStore {
  return {
    lease: (request) => rpc.call<LimitLease>('limits.lease', [request]),
    release: async (request) => void (await rpc.call('limits.release', [request])),
    add: async (request) => void (await rpc.call('limits.add', [request])),
  };
}

/**
 * The Responses API's stored responses, in the primary's database. Responses cross the IPC channel as JSON, which
 * carries everything a stored response holds (a missing one travels as null).
 */
export function createRemoteResponseStore(rpc: ClusterRpcClient): ResponseStore {
  return {
    put: async (response) => void (await rpc.call('responses.put', [response])),
    get: async (id) => orUndefined(await rpc.call<StoredResponse | null>('responses.get', [id])),
    // JSON has no Infinity (it would arrive as null, an empty chain): the longest chain it means is finite.
    chain: (id, maxLength) =>
      rpc.call<StoredResponse[]>('responses.chain', [id, Math.min(maxLength, Number.MAX_SAFE_INTEGER)]),
    delete: (id) => rpc.call<boolean>('responses.delete', [id]),
  };
}

const invalidationChannel = 'keys.invalidation';

/** Key invalidations relayed by the primary to every worker (used when there is no Redis pub/sub). */
export function createClusterInvalidationBus(rpc: ClusterRpcClient): KeyInvalidationBus {
  return {
    publish: async (invalidation) => void (await rpc.call('keys.publishInvalidation', [invalidation])),
    subscribe: (listener) => rpc.onBroadcast(invalidationChannel, (payload) => listener(payload as KeyInvalidation)),
  };
}

/** What the primary owns and serves to workers. */
export interface PrimaryServices {
  keyStore: KeyStore;
  /**
   * How many key lookups by hash may be in flight on the host (default 4) and how many hashes go in one query: every
   * worker's lookups of keys missing from the caches meet in one batcher here, so the database sees at most that
   * many, however many workers there are. Its queue is not capped (each worker caps its own, and sends at most its
   * own `maxConcurrent` batches at a time), so a worker's lookup is never refused here.
   */
  keyLookup?: Pick<KeyStoreLookupLimits, 'maxConcurrent' | 'maxBatchSize'>;
  /** Accepts a worker's usage batch into the primary's queue (synchronous enqueue). */
  acceptUsage: (events: readonly UsageEvent[]) => void;
  cache?: KeyValueCache;
  limitStore?: LimitStore;
  /** The Responses API's stored responses (the Drizzle store over the primary's database). */
  responseStore?: ResponseStore;
  /** Sends an invalidation to every worker. */
  broadcastInvalidation?: (invalidation: KeyInvalidation) => void;
  /** Further handlers (e.g. usage queries). */
  extra?: ClusterRpcHandlers;
}

/** The RPC handlers the primary serves for {@link PrimaryServices}. */
export function primaryHandlers(services: PrimaryServices): ClusterRpcHandlers {
  const { keyStore, cache, limitStore, responseStore } = services;
  const lookups = createKeyStoreLookupBatcher(keyStore, { ...services.keyLookup, maxQueued: Number.POSITIVE_INFINITY });
  const handlers: ClusterRpcHandlers = {
    'keys.findByHash': async (hash: string) => (await lookups.findMany([hash]))[0],
    'keys.findManyByHash': (hashes: string[]) => lookups.findMany(hashes),
    'keys.findById': (id: string) => refusalsAsValues(() => keyStore.findById(id)),
    'keys.create': (key: Parameters<KeyStore['create']>[0]) => refusalsAsValues(() => keyStore.create(key)),
    'keys.update': (id: string, changes: Parameters<KeyStore['update']>[1]) =>
      refusalsAsValues(() => keyStore.update(id, changes)),
    'keys.revoke': (id: string) => refusalsAsValues(() => keyStore.revoke(id)),
    'keys.rotate': (id: string, replacement: Parameters<KeyStore['rotate']>[1]) =>
      refusalsAsValues(() => keyStore.rotate(id, replacement)),
    'keys.list': (options: Parameters<KeyStore['list']>[0]) => refusalsAsValues(() => keyStore.list(options)),
    'keys.publishInvalidation': (invalidation: KeyInvalidation) => services.broadcastInvalidation?.(invalidation),
    'usage.accept': (events: UsageEvent[]) => services.acceptUsage(events),
    ...services.extra,
  };
  if (cache !== undefined) {
    handlers['cache.get'] = (key: string) => cache.get(key);
    handlers['cache.set'] = (key: string, value: string, options: { ttlSeconds: number }) =>
      cache.set(key, value, options);
    handlers['cache.setIfAbsent'] = (key: string, value: string, options: { ttlSeconds: number }) =>
      cache.setIfAbsent(key, value, options);
    handlers['cache.delete'] = (key: string) => cache.delete(key);
  }
  if (limitStore !== undefined) {
    handlers['limits.lease'] = (request: Parameters<LimitStore['lease']>[0]) => limitStore.lease(request);
    handlers['limits.release'] = (request: Parameters<LimitStore['release']>[0]) => limitStore.release(request);
    handlers['limits.add'] = (request: Parameters<LimitStore['add']>[0]) => limitStore.add(request);
  }
  if (responseStore !== undefined) {
    handlers['responses.put'] = (response: StoredResponse) => responseStore.put(response);
    handlers['responses.get'] = (id: string) => responseStore.get(id);
    handlers['responses.chain'] = (id: string, maxLength: number) => responseStore.chain(id, maxLength);
    handlers['responses.delete'] = (id: string) => responseStore.delete(id);
  }
  return handlers;
}

/** The broadcast channel name workers listen on for invalidations. */
export const clusterInvalidationChannel = invalidationChannel;

/** The broadcast channel on which the primary tells workers whether usage can be persisted (`{ canPersist }`). */
export const usageLedgerChannel = 'usage.ledger';
