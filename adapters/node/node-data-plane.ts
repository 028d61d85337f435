import type { Redis } from 'ioredis';
import { resolve } from 'node:path';
import type { KeyInvalidationBus } from '../../src/auth/key-invalidation.ts';
import type { KeyStore } from '../../src/auth/key-store.ts';
import type { KeyStoreLookupLimits } from '../../src/auth/key-store-lookup-batcher.ts';
import { createLocalKeyInvalidationBus } from '../../src/auth/local-key-invalidation-bus.ts';
import type { KeyValueCache } from '../../src/cache/key-value-cache.ts';
import { createMemoryKeyValueCache } from '../../src/cache/memory-key-value-cache.ts';
import type { LimitStore } from '../../src/limits/limit-store.ts';
import { createMemoryLimitStore } from '../../src/limits/memory-limit-store.ts';
import type { RateLimitMode } from '../../src/limits/rate-limiter.ts';
import type { GatewayLogger } from '../../src/services.ts';
import type { UsageEvent } from '../../src/usage/usage-event.ts';
import type { UsageQuery } from '../../src/usage/usage-query.ts';
import { createUsageQueue, type UsageQueue } from '../../src/usage/usage-queue.ts';
import { openDatabaseAccountingStores } from '../shared/database-accounting-stores.ts';
import { readKeyLookupLimits } from '../shared/key-lookup-settings.ts';
import { readRateLimitMode } from '../shared/rate-limit-mode-setting.ts';
import type { ClusterRpcClient, ClusterRpcHandlers } from './cluster-rpc.ts';
import {
  createClusterInvalidationBus,
  createRemoteKeyStore,
  createRemoteKeyValueCache,
  createRemoteLimitStore,
  createRemoteUsageSink,
  primaryHandlers,
} from './cluster-remote-services.ts';
import { openRedisConnection, openRedisSubscriberConnection, whenRedisReady } from './redis-connection.ts';
import { createRedisKeyInvalidationBus, type RedisKeyInvalidationBus } from './redis-key-invalidation-bus.ts';
import { createRedisKeyValueCache } from './redis-key-value-cache.ts';
import { createRedisLimitStore } from './redis-limit-store.ts';

/**
 * Where a Node process keeps keys, limits and usage, by role:
 *
 * - `single` (TORII_WORKERS=1): everything in this process: the database (PGlite or Postgres), the usage queue with
 *   its disk spill, and, without Redis, an in-process cache and limit store.
 * - `primary` (cluster): the database and the usage writer live here, once per host. Workers hand their usage
 *   batches over IPC instead of writing themselves: one pool of TORII_DATABASE_POOL_MAX (4) connections per host
 *   rather than 4 per worker (a 64-core host would otherwise open 256), and PGlite, which only one process may open,
 *   works in cluster mode. Without Redis the primary is also the shared cache, limit store and invalidation relay.
 * - `worker` (cluster): the request path. Keys are looked up in its own LRU, then Redis or the primary's cache,
 *   then (through the primary) the database. Usage is queued here and sent to the primary in batches every 200 ms.
 *
 * With REDIS_URL, every process (workers and instances alike) shares Redis for the key cache, rate limits (leased
 * slices) and key invalidations (pub/sub).
 */
export interface NodeDataPlane {
  keyStore: KeyStore;
  /** Limits on store lookups of keys missing from the caches (TORII_KEY_LOOKUP_CONCURRENCY, _QUEUE_MAX). */
  keyLookup: KeyStoreLookupLimits;
  sharedCache: KeyValueCache | undefined;
  invalidations: KeyInvalidationBus;
  limitStore: LimitStore | undefined;
  rateLimitMode: RateLimitMode;
  usageQuery: UsageQuery;
  /** The request path's usage queue (a worker's forwards to the primary). */
  usageQueue: UsageQueue;
  /** Where Redis is used, for logs: `none` or the URL's host. */
  redisHost: string | undefined;
  /**
   * Registers a listener for "invalidations may have been missed" (the Redis subscriber reconnected): local key
   * copies must be dropped.
   */
  onInvalidationGap(listener: () => void): void;
  /** Registers work to run first when the plane closes (e.g. pushing pending budget spend). */
  onClose(task: () => Promise<void>): void;
  /** Flushes usage and closes connections (SIGTERM). */
  close(options: { timeoutMs: number }): Promise<void>;
}

/** The close tasks of a plane, run in order before the plane's own. */
function closeTasks(): { add(task: () => Promise<void>): void; run(): Promise<void> } {
  const tasks: (() => Promise<void>)[] = [];
  return {
    add: (task) => void tasks.push(task),
    async run() {
      for (const task of tasks) await task().catch(() => {});
    },
  };
}

/** Settings read from the environment. */
interface DataPlaneSettings {
  redisUrl: string | undefined;
  dataDirectory: string;
  rateLimitMode: RateLimitMode | undefined;
  keyLookup: KeyStoreLookupLimits;
}

function readSettings(environment: NodeJS.ProcessEnv): DataPlaneSettings {
  return {
    redisUrl: environment.REDIS_URL || undefined,
    dataDirectory: resolve(environment.TORII_DATA_DIR || '.torii'),
    rateLimitMode: readRateLimitMode(environment),
    keyLookup: readKeyLookupLimits(environment),
  };
}

interface RedisParts {
  commands: Redis;
  subscriber: Redis;
  bus: RedisKeyInvalidationBus;
  cache: KeyValueCache;
  limitStore: LimitStore;
  close(): Promise<void>;
}

async function openRedisParts(url: string, logger: GatewayLogger, onGap: () => void): Promise<RedisParts> {
  const commands = openRedisConnection(url, { logger });
  const subscriber = openRedisSubscriberConnection(url, { logger });
  try {
    await whenRedisReady(commands, 10_000);
  } catch (error) {
    commands.disconnect();
    subscriber.disconnect();
    throw new Error(`REDIS_URL is set but Redis did not answer within 10 s: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const bus = createRedisKeyInvalidationBus({ publisher: commands, subscriber, logger, onResubscribed: onGap });
  return {
    commands,
    subscriber,
    bus,
    cache: createRedisKeyValueCache(commands, { prefix: '' }),
    limitStore: createRedisLimitStore({ redis: commands }),
    async close() {
      await bus.close().catch(() => {});
      commands.disconnect();
      subscriber.disconnect();
    },
  };
}

/**
 * Opens the data plane of a single process (TORII_WORKERS=1).
 *
 * @example
 * const plane = await openSingleProcessDataPlane(process.env, logger);
 */
export async function openSingleProcessDataPlane(
  environment: NodeJS.ProcessEnv,
  logger: GatewayLogger,
): Promise<NodeDataPlane> {
  const settings = readSettings(environment);
  const owner = await openDatabaseAccountingStores({ environment, dataDirectory: settings.dataDirectory });
  const gapListeners: (() => void)[] = [];
  const redis =
    settings.redisUrl === undefined
      ? undefined
      : await openRedisParts(settings.redisUrl, logger, () => gapListeners.forEach((listener) => listener()));
  const tasks = closeTasks();
  return {
    onInvalidationGap: (listener) => void gapListeners.push(listener),
    onClose: tasks.add,
    keyStore: owner.keyStore,
    keyLookup: settings.keyLookup,
    usageQuery: owner.usageQuery,
    usageQueue: owner.usageQueue,
    sharedCache: redis?.cache,
    invalidations: redis?.bus ?? createLocalKeyInvalidationBus(),
    limitStore: redis?.limitStore,
    rateLimitMode: settings.rateLimitMode ?? (redis === undefined ? 'local' : 'leased'),
    redisHost: settings.redisUrl === undefined ? undefined : new URL(settings.redisUrl).host,
    async close({ timeoutMs }) {
      await tasks.run();
      await owner.close(timeoutMs);
      await redis?.close();
    },
  };
}

/** The primary's side of a cluster: what it owns and the RPC handlers it serves every worker. */
export interface ClusterPrimaryDataPlane {
  handlers: ClusterRpcHandlers;
  /** Set by the primary once it can reach its workers: relays key invalidations when there is no Redis. */
  setBroadcast(broadcast: (invalidation: unknown) => void): void;
  close(options: { timeoutMs: number }): Promise<void>;
}

/**
 * Opens the cluster primary's data plane: the database, the usage writer (fed by workers), and without Redis the
 * shared cache and limit counters.
 *
 * @example
 * const plane = await openClusterPrimaryDataPlane(process.env);
 * serveClusterRpc(worker, plane.handlers);
 */
export async function openClusterPrimaryDataPlane(environment: NodeJS.ProcessEnv): Promise<ClusterPrimaryDataPlane> {
  const settings = readSettings(environment);
  const owner = await openDatabaseAccountingStores({ environment, dataDirectory: settings.dataDirectory });
  const withoutRedis = settings.redisUrl === undefined;
  let broadcast: ((invalidation: unknown) => void) | undefined;
  const handlers = primaryHandlers({
    keyStore: owner.keyStore,
    keyLookup: settings.keyLookup,
    acceptUsage: (events: readonly UsageEvent[]) => {
      for (const event of events) owner.usageQueue.enqueue(event);
    },
    ...(withoutRedis
      ? {
          cache: createMemoryKeyValueCache({ maxEntries: 200_000 }),
          limitStore: createMemoryLimitStore(),
          broadcastInvalidation: (invalidation) => broadcast?.(invalidation),
        }
      : {}),
    extra: {
      'usage.summarize': (options: Parameters<UsageQuery['summarize']>[0]) => owner.usageQuery.summarize(options),
      'usage.spendByKey': async (keyIds: string[], since: number) =>
        Object.fromEntries(await owner.usageQuery.spendByKey(keyIds, since)),
    },
  });
  return {
    handlers,
    setBroadcast(next) {
      broadcast = next;
    },
    close: ({ timeoutMs }) => owner.close(timeoutMs),
  };
}

/**
 * Opens a cluster worker's data plane: Redis when configured, the primary (over IPC) for everything else.
 *
 * @example
 * const plane = await openClusterWorkerDataPlane(process.env, createClusterRpcClient(), logger);
 */
export async function openClusterWorkerDataPlane(
  environment: NodeJS.ProcessEnv,
  rpc: ClusterRpcClient,
  logger: GatewayLogger,
): Promise<NodeDataPlane> {
  const settings = readSettings(environment);
  const gapListeners: (() => void)[] = [];
  const redis =
    settings.redisUrl === undefined
      ? undefined
      : await openRedisParts(settings.redisUrl, logger, () => gapListeners.forEach((listener) => listener()));
  // Batches go to the primary's queue, which writes, retries and spills them; a short delay keeps what a killed
  // worker can lose small (see the README: at most ~200 ms of its usage events).
  const usageQueue = createUsageQueue({
    sink: createRemoteUsageSink(rpc),
    maxBatchSize: 200,
    maxDelayMs: 200,
  });
  const usageQuery: UsageQuery = {
    summarize: (options) => rpc.call('usage.summarize', [options]),
    spendByKey: async (keyIds, since) =>
      new Map(Object.entries(await rpc.call<Record<string, number>>('usage.spendByKey', [keyIds, since]))),
  };
  const tasks = closeTasks();
  return {
    onInvalidationGap: (listener) => void gapListeners.push(listener),
    onClose: tasks.add,
    keyStore: createRemoteKeyStore(rpc),
    keyLookup: settings.keyLookup,
    usageQuery,
    usageQueue,
    sharedCache: redis?.cache ?? createRemoteKeyValueCache(rpc),
    invalidations: redis?.bus ?? createClusterInvalidationBus(rpc),
    limitStore: redis?.limitStore ?? createRemoteLimitStore(rpc),
    rateLimitMode: settings.rateLimitMode ?? 'leased',
    redisHost: settings.redisUrl === undefined ? undefined : new URL(settings.redisUrl).host,
    async close({ timeoutMs }) {
      await tasks.run();
      await usageQueue.flush({ timeoutMs });
      await redis?.close();
    },
  };
}
