import type { KeyInvalidation, KeyInvalidationBus } from '../../src/auth/key-invalidation.ts';
import type { KeyStore } from '../../src/auth/key-store.ts';
import { createKeyStoreLookupBatcher, type KeyStoreLookupLimits } from '../../src/auth/key-store-lookup-batcher.ts';
import type { KeyValueCache } from '../../src/cache/key-value-cache.ts';
import { GatewayError, isGatewayError } from '../../src/errors.ts';
import type { LimitStore } from '../../src/limits/limit-store.ts';
import type { ResponseStore } from '../../src/responses/response-store.ts';
import type { UsageEvent, UsageSink } from '../../src/usage/usage-event.ts';
import type { UsageQuery } from '../../src/usage/usage-query.ts';
import type { KeyStoreRefusal } from './cluster-methods.ts';
import type { ClusterRpcClient, ServedClusterRpcHandlers } from './cluster-rpc.ts';

/**
 * In cluster mode the primary owns the database (PGlite allows one process per directory, and one pool per host
 * keeps Postgres connections at a handful instead of workers x pool size) and, when no Redis is configured, the
 * shared state: the key cache, the rate-limit counters and the invalidation relay. Workers reach them through
 * these seam implementations over the cluster IPC channel; the primary serves them with {@link primaryHandlers}.
 * The methods, their arguments and results are declared once, in cluster-methods.ts.
 */

const orUndefined = <Value>(value: Value | null): Value | undefined => (value === null ? undefined : value);

/** What a seam's `undefined` travels as (JSON has no undefined; the RPC would answer null for it anyway). */
const orNull = <Value>(value: Value | undefined): Value | null => (value === undefined ? null : value);

const isKeyStoreRefusal = (value: unknown): value is KeyStoreRefusal =>
  typeof value === 'object' && value !== null && 'keyStoreRefusal' in value;

/** Answers a key-store call, passing a {@link GatewayError} on as a value the worker throws again. */
async function refusalsAsValues<Value>(call: () => Promise<Value>): Promise<Value | KeyStoreRefusal> {
  try {
    return await call();
  } catch (error) {
    if (!isGatewayError(error)) throw error;
    const { status, type, code, param, message, retryable, headers } = error;
    return {
      keyStoreRefusal: { status, type, code, param, message, retryable, ...(headers === undefined ? {} : { headers }) },
    };
  }
}

/** The key store's answer, or its refusal thrown again as the {@link GatewayError} it was in the primary. */
function unlessRefused<Value>(value: Value | KeyStoreRefusal): Value {
  if (isKeyStoreRefusal(value)) throw new GatewayError(value.keyStoreRefusal);
  return value;
}

/** KeyStore whose calls the primary answers. */
export function createRemoteKeyStore(rpc: ClusterRpcClient): KeyStore {
  return {
    findByHash: async (hash) => orUndefined(await rpc.call('keys.findByHash', [hash])),
    findManyByHash: (hashes) => rpc.call('keys.findManyByHash', [hashes]),
    findById: async (id) => orUndefined(unlessRefused(await rpc.call('keys.findById', [id]))),
    create: async (key) => unlessRefused(await rpc.call('keys.create', [key])),
    update: async (id, changes) => orUndefined(unlessRefused(await rpc.call('keys.update', [id, changes]))),
    revoke: async (id) => orUndefined(unlessRefused(await rpc.call('keys.revoke', [id]))),
    rotate: async (id, replacement) => orUndefined(unlessRefused(await rpc.call('keys.rotate', [id, replacement]))),
    list: async (options) => unlessRefused(await rpc.call('keys.list', [options])),
  };
}

/** UsageSink that hands batches to the primary's usage queue (which writes, retries and spills them). */
export function createRemoteUsageSink(rpc: ClusterRpcClient): UsageSink {
  return { write: async (events) => void (await rpc.call('usage.accept', [events])) };
}

/** The primary's usage ledger, for the admin API's reports and the budget reconciliation. */
export function createRemoteUsageQuery(rpc: ClusterRpcClient): UsageQuery {
  return {
    summarize: (options) => rpc.call('usage.summarize', [options]),
    spendByKey: async (keyIds, since) => new Map(Object.entries(await rpc.call('usage.spendByKey', [keyIds, since]))),
  };
}

/** The primary's shared cache (used when there is no Redis). */
export function createRemoteKeyValueCache(rpc: ClusterRpcClient): KeyValueCache {
  return {
    get: async (key) => orUndefined(await rpc.call('cache.get', [key])),
    set: async (key, value, options) => void (await rpc.call('cache.set', [key, value, options])),
    setIfAbsent: (key, value, options) => rpc.call('cache.setIfAbsent', [key, value, options]),
    delete: async (key) => void (await rpc.call('cache.delete', [key])),
  };
}

/** The primary's rate-limit counters (used when there is no Redis): workers lease slices from them. */
export function createRemoteLimitStore(rpc: ClusterRpcClient): LimitStore {
  return {
    lease: (request) => rpc.call('limits.lease', [request]),
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
    get: async (id) => orUndefined(await rpc.call('responses.get', [id])),
    // JSON has no Infinity (it would arrive as null, an empty chain): the longest chain it means is finite.
    chain: (id, maxLength) => rpc.call('responses.chain', [id, Math.min(maxLength, Number.MAX_SAFE_INTEGER)]),
    delete: (id) => rpc.call('responses.delete', [id]),
  };
}

const invalidationChannel = 'keys.invalidation';

/** Key invalidations relayed by the primary to every worker (used when there is no Redis pub/sub). */
export function createClusterInvalidationBus(rpc: ClusterRpcClient): KeyInvalidationBus {
  return {
    publish: async (invalidation) => void (await rpc.call('keys.publishInvalidation', [invalidation])),
    subscribe: (listener) => rpc.onBroadcast(invalidationChannel, listener),
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
  /** The usage ledger's reports (the admin API's usage routes, the budget reconciliation). */
  usageQuery: UsageQuery;
  /** The shared cache, served when there is no Redis. */
  cache?: KeyValueCache;
  /** The rate-limit counters, served when there is no Redis. */
  limitStore?: LimitStore;
  /** The Responses API's stored responses (the Drizzle store over the primary's database). */
  responseStore?: ResponseStore;
  /** Sends an invalidation to every worker. */
  broadcastInvalidation?: (invalidation: KeyInvalidation) => void;
}

/**
 * The RPC handlers the primary serves for {@link PrimaryServices}: every method of cluster-methods.ts, those of
 * `cache.*`, `limits.*` and `responses.*` only when `services` has what they need.
 */
export function primaryHandlers(services: PrimaryServices): ServedClusterRpcHandlers {
  const { keyStore, usageQuery, cache, limitStore, responseStore } = services;
  const lookups = createKeyStoreLookupBatcher(keyStore, { ...services.keyLookup, maxQueued: Number.POSITIVE_INFINITY });
  const handlers: ServedClusterRpcHandlers = {
    'keys.findByHash': async (hash) => orNull((await lookups.findMany([hash]))[0]),
    'keys.findManyByHash': (hashes) => lookups.findMany(hashes),
    'keys.findById': (id) => refusalsAsValues(async () => orNull(await keyStore.findById(id))),
    'keys.create': (key) => refusalsAsValues(() => keyStore.create(key)),
    'keys.update': (id, changes) => refusalsAsValues(async () => orNull(await keyStore.update(id, changes))),
    'keys.revoke': (id) => refusalsAsValues(async () => orNull(await keyStore.revoke(id))),
    'keys.rotate': (id, replacement) => refusalsAsValues(async () => orNull(await keyStore.rotate(id, replacement))),
    'keys.list': (options) => refusalsAsValues(() => keyStore.list(options)),
    'keys.publishInvalidation': (invalidation) => services.broadcastInvalidation?.(invalidation),
    'usage.accept': (events) => services.acceptUsage(events),
    'usage.summarize': (options) => usageQuery.summarize(options),
    'usage.spendByKey': async (keyIds, since) => Object.fromEntries(await usageQuery.spendByKey(keyIds, since)),
  };
  if (cache !== undefined) {
    handlers['cache.get'] = async (key) => orNull(await cache.get(key));
    handlers['cache.set'] = (key, value, options) => cache.set(key, value, options);
    handlers['cache.setIfAbsent'] = (key, value, options) => cache.setIfAbsent(key, value, options);
    handlers['cache.delete'] = (key) => cache.delete(key);
  }
  if (limitStore !== undefined) {
    handlers['limits.lease'] = (request) => limitStore.lease(request);
    handlers['limits.release'] = (request) => limitStore.release(request);
    handlers['limits.add'] = (request) => limitStore.add(request);
  }
  if (responseStore !== undefined) {
    handlers['responses.put'] = (response) => responseStore.put(response);
    handlers['responses.get'] = async (id) => orNull(await responseStore.get(id));
    handlers['responses.chain'] = (id, maxLength) => responseStore.chain(id, maxLength);
    handlers['responses.delete'] = (id) => responseStore.delete(id);
  }
  return handlers;
}

/** The broadcast channel name workers listen on for invalidations. */
export const clusterInvalidationChannel = invalidationChannel;

/** The broadcast channel on which the primary tells workers whether usage can be persisted (`{ canPersist }`). */
export const usageLedgerChannel = 'usage.ledger';
