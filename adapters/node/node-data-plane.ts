import type { Redis } from 'ioredis';
import { resolve } from 'node:path';
import type { KeyInvalidation, KeyInvalidationBus } from '../../src/auth/key-invalidation.ts';
import type { KeyStore } from '../../src/auth/key-store.ts';
import type { KeyStoreLookupLimits } from '../../src/auth/key-store-lookup-batcher.ts';
import { createLocalKeyInvalidationBus } from '../../src/auth/local-key-invalidation-bus.ts';
import type { KeyValueCache } from '../../src/cache/key-value-cache.ts';
import { createMemoryKeyValueCache } from '../../src/cache/memory-key-value-cache.ts';
import type { LimitStore } from '../../src/limits/limit-store.ts';
import { createMemoryLimitStore } from '../../src/limits/memory-limit-store.ts';
import type { RateLimitMode } from '../../src/limits/rate-limiter.ts';
import type { ResponseStore } from '../../src/responses/response-store.ts';
import type { GatewayLogger } from '../../src/services.ts';
import type { UsageEvent } from '../../src/usage/usage-event.ts';
import type { UsageQuery } from '../../src/usage/usage-query.ts';
import { createUsageQueue, type UsageQueue } from '../../src/usage/usage-queue.ts';
import { openDatabaseAccountingStores, type DatabaseAccountingStores } from '../shared/database-accounting-stores.ts';
import { readKeyLookupLimits } from '../shared/key-lookup-settings.ts';
import { StartupError } from '../shared/startup-error.ts';
import { startUsageLedgerMonitor, type UsageLedgerMonitor } from '../shared/usage-ledger-monitor.ts';
import { readRateLimitMode } from '../shared/rate-limit-mode-setting.ts';
import type { ClusterRpcClient, ServedClusterRpcHandlers } from './cluster-rpc.ts';
import {
  createClusterInvalidationBus,
  createRemoteKeyStore,
  createRemoteKeyValueCache,
  createRemoteLimitStore,
  createRemoteResponseStore,
  createRemoteUsageQuery,
  createRemoteUsageSink,
  primaryHandlers,
  usageLedgerChannel,
} from './cluster-remote-services.ts';
import { openRedisConnection, openRedisSubscriberConnection, whenRedisReady } from './redis-connection.ts';
import { createRedisKeyInvalidationBus, type RedisKeyInvalidationBus } from './redis-key-invalidation-bus.ts';
import { createClusterCircuitBus, createRedisCircuitBus, type RedisCircuitBus } from './circuit-buses.ts';
import type { CircuitBus } from '../../src/routing/circuit-bus.ts';
import { createRedisKeyValueCache } from './redis-key-value-cache.ts';
import { createRedisLimitStore } from './redis-limit-store.ts';
import { openPostgresUsageThread } from './postgres-usage-thread.ts';
import { usageInsertStatement } from '../../src/db/drizzle-usage-sink.ts';

/**
 * Where a Node process keeps keys, limits, usage and the Responses API's stored responses, by role:
 *
 * - `single` (TORII_WORKERS=1): everything in this process: the database (PGlite or Postgres), the usage queue with
 *   its disk spill, and, without Redis, an in-process cache and limit store.
 * - `primary` (cluster): the database and the usage writer live here, once per host. Workers hand their usage
 *   batches over IPC instead of writing themselves: one pool of TORII_DATABASE_POOL_MAX (4) connections per host
 *   rather than 4 per worker (a 64-core host would otherwise open 256), and PGlite, which only one process may open,
 *   works in cluster mode. Without Redis the primary is also the shared cache, limit store and invalidation relay.
 * - `worker` (cluster): the request path. Keys are looked up in its own LRU, then Redis or the primary's cache,
 *   then (through the primary) the database. Usage is queued here and sent to the primary in batches every 200 ms.
 *   Stored responses are read and written through the primary, one call each (no Redis tier: they are rows).
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
  /** How circuit openings reach other processes: Redis when configured, the primary in a cluster without it. */
  circuitBus: CircuitBus | undefined;
  rateLimitMode: RateLimitMode;
  usageQuery: UsageQuery;
  /** The request path's usage queue (a worker's forwards to the primary). */
  usageQueue: UsageQueue;
  /** The Responses API's stored responses: in the database (a worker's go through the primary, which owns it). */
  responseStore: ResponseStore;
  /** Where Redis is used, for logs: `none` or the URL's host. */
  redisHost: string | undefined;
  /**
   * Whether usage can be persisted now (database, or else the spill); false turns `/health/ready` to 503. A cluster
   * worker learns it from the primary, which owns the ledger.
   */
  canPersistUsage(): boolean;
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
  /** Most usage events held in memory before the oldest go to the spill (TORII_USAGE_QUEUE_MAX_EVENTS). */
  usageQueueMaxEvents: number | undefined;
}

function readSettings(environment: NodeJS.ProcessEnv): DataPlaneSettings {
  const maxEvents = environment.TORII_USAGE_QUEUE_MAX_EVENTS;
  if (maxEvents !== undefined && maxEvents !== '' && !/^[1-9]\d*$/.test(maxEvents.trim()))
    throw new StartupError('TORII_USAGE_QUEUE_MAX_EVENTS', `must be a positive integer, got "${maxEvents}"`);
  const redisUrl = environment.REDIS_URL || undefined;
  if (redisUrl !== undefined) checkRedisUrl(redisUrl);
  return {
    redisUrl,
    dataDirectory: resolve(environment.TORII_DATA_DIR || '.torii'),
    rateLimitMode: readRateLimitMode(environment),
    keyLookup: readKeyLookupLimits(environment),
    usageQueueMaxEvents: maxEvents === undefined || maxEvents === '' ? undefined : Number(maxEvents),
  };
}

function checkRedisUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StartupError('REDIS_URL', 'is not a valid URL (expected redis://[:password@]host:6379[/database])');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
    throw new StartupError('REDIS_URL', `must be a redis:// or rediss:// URL, got a ${parsed.protocol}// URL`);
}

/** How a process that owns the ledger writes it. */
export interface LedgerOwnerOptions {
  /**
   * The usage thread's program (postgres-usage-thread-main.ts, built as `dist/postgres-usage-thread-main.js`): with
   * `DATABASE_URL`, the ledger's inserts run on a worker thread of their own (postgres-usage-thread.ts). Without it,
   * on the request thread's pool.
   */
  usageThreadFile?: URL;
}

/** The database-owning stores of a single process or a cluster primary, and the monitor of their ledger. */
async function openLedgerOwner(
  settings: DataPlaneSettings,
  environment: NodeJS.ProcessEnv,
  logger: GatewayLogger,
  options: LedgerOwnerOptions,
): Promise<{ owner: DatabaseAccountingStores; ledger: UsageLedgerMonitor }> {
  const threadFile = options.usageThreadFile;
  const owner = await openDatabaseAccountingStores({
    environment,
    dataDirectory: settings.dataDirectory,
    ...(threadFile === undefined
      ? {}
      : {
          postgresUsageWriter: (url: string) =>
            openPostgresUsageThread({ url, threadFile, statement: usageInsertStatement }),
        }),
    ...(settings.usageQueueMaxEvents === undefined
      ? {}
      : {
          // A batch never holds more than memory may (the queue raises its bound to one batch otherwise).
          queue: {
            maxQueued: settings.usageQueueMaxEvents,
            maxBatchSize: Math.min(500, settings.usageQueueMaxEvents),
          },
        }),
  });
  const spill = owner.spill;
  const ledger = startUsageLedgerMonitor({
    queue: owner.usageQueue,
    logger,
    ...(spill === undefined ? {} : { spillHealth: () => spill.health() }),
  });
  return { owner, ledger };
}

/** Closes the ledger owner at shutdown, saying so when usage could not be kept. */
async function closeLedgerOwner(
  owner: DatabaseAccountingStores,
  ledger: UsageLedgerMonitor,
  logger: GatewayLogger,
  timeoutMs: number,
): Promise<void> {
  await ledger.check();
  ledger.stop();
  const flushed = await owner.close(timeoutMs);
  if (flushed.dropped > 0) {
    logger.error('usage events lost at shutdown: neither the database nor the spill could take them', {
      lost: flushed.dropped,
      lostTotal: owner.usageQueue.stats().dropped,
      error: owner.usageQueue.stats().lastSpillError?.message,
    });
  } else if (flushed.spilled > 0) {
    logger.warn('usage the database could not take at shutdown went to the spill; it is replayed at the next start', {
      spilled: flushed.spilled,
    });
  }
}

interface RedisParts {
  commands: Redis;
  subscriber: Redis;
  bus: RedisKeyInvalidationBus;
  circuits: RedisCircuitBus;
  cache: KeyValueCache;
  limitStore: LimitStore;
  close(): Promise<void>;
}

/** How long a process starting with REDIS_URL waits for Redis before it refuses to start. */
const redisStartTimeoutMs = 10_000;

/**
 * Checks once, at start, that Redis answers: a REDIS_URL that never worked is a configuration error (one line, exit
 * 1), while Redis going away later is an outage the gateway rides out (see redis-connection.ts). The cluster primary
 * checks before forking, so its workers never crash-loop on it.
 */
export async function checkRedisAtStart(environment: NodeJS.ProcessEnv, logger: GatewayLogger): Promise<void> {
  const url = readSettings(environment).redisUrl;
  if (url === undefined) return;
  const probe = openRedisConnection(url, { logger: quietLogger(logger), connectionName: 'torii-start-check' });
  try {
    await whenRedisReady(probe, redisStartTimeoutMs);
  } catch (error) {
    throw new StartupError(
      'REDIS_URL',
      `Redis at ${new URL(url).host} did not answer within ${redisStartTimeoutMs / 1000} s (${(error as Error).message})`,
      { cause: error },
    );
  } finally {
    probe.disconnect();
  }
}

/** A logger that drops the connection chatter of a start-up probe (its failure is reported as one line). */
function quietLogger(logger: GatewayLogger): GatewayLogger {
  return { info: () => {}, warn: () => {}, error: logger.error };
}

async function openRedisParts(
  url: string,
  logger: GatewayLogger,
  onGap: () => void,
  options: { waitForReady: boolean },
): Promise<RedisParts> {
  const commands = openRedisConnection(url, { logger });
  const subscriber = openRedisSubscriberConnection(url, { logger });
  if (options.waitForReady) {
    try {
      await whenRedisReady(commands, redisStartTimeoutMs);
    } catch (error) {
      commands.disconnect();
      subscriber.disconnect();
      throw new StartupError(
        'REDIS_URL',
        `Redis at ${new URL(url).host} did not answer within ${redisStartTimeoutMs / 1000} s (${(error as Error).message})`,
        { cause: error },
      );
    }
  }
  const bus = createRedisKeyInvalidationBus({ publisher: commands, subscriber, logger, onResubscribed: onGap });
  const circuits = createRedisCircuitBus({ publisher: commands, subscriber, logger });
  return {
    commands,
    subscriber,
    bus,
    circuits,
    cache: createRedisKeyValueCache(commands, { prefix: '' }),
    limitStore: createRedisLimitStore({ redis: commands }),
    async close() {
      await bus.close().catch(() => {});
      await circuits.close().catch(() => {});
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
  options: LedgerOwnerOptions = {},
): Promise<NodeDataPlane> {
  const settings = readSettings(environment);
  const gapListeners: (() => void)[] = [];
  // A Redis that does not answer at start is one line and exit 1 (checked quietly, without reconnect chatter).
  await checkRedisAtStart(environment, logger);
  const redis =
    settings.redisUrl === undefined
      ? undefined
      : await openRedisParts(settings.redisUrl, logger, () => gapListeners.forEach((listener) => listener()), {
          waitForReady: true,
        });
  const opened = await openLedgerOwner(settings, environment, logger, options).catch(async (error: unknown) => {
    await redis?.close();
    throw error;
  });
  const { owner, ledger } = opened;
  const tasks = closeTasks();
  return {
    canPersistUsage: ledger.canPersist,
    onInvalidationGap: (listener) => void gapListeners.push(listener),
    onClose: tasks.add,
    keyStore: owner.keyStore,
    keyLookup: settings.keyLookup,
    usageQuery: owner.usageQuery,
    usageQueue: owner.usageQueue,
    responseStore: owner.responseStore,
    sharedCache: redis?.cache,
    invalidations: redis?.bus ?? createLocalKeyInvalidationBus(),
    circuitBus: redis?.circuits,
    limitStore: redis?.limitStore,
    rateLimitMode: settings.rateLimitMode ?? (redis === undefined ? 'local' : 'leased'),
    redisHost: settings.redisUrl === undefined ? undefined : new URL(settings.redisUrl).host,
    async close({ timeoutMs }) {
      await tasks.run();
      await closeLedgerOwner(owner, ledger, logger, timeoutMs);
      await redis?.close();
    },
  };
}

/** The primary's side of a cluster: what it owns and the RPC handlers it serves every worker. */
export interface ClusterPrimaryDataPlane {
  handlers: ServedClusterRpcHandlers;
  /** The ledger's queue (its counters are exported as metrics). */
  usageQueue: UsageQueue;
  /** Whether usage can be persisted; workers are told when it changes (their `/health/ready` follows it). */
  ledger: UsageLedgerMonitor;
  /** Set by the primary once it can reach its workers: relays key invalidations when there is no Redis. */
  setBroadcast(broadcast: (invalidation: KeyInvalidation) => void): void;
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
export async function openClusterPrimaryDataPlane(
  environment: NodeJS.ProcessEnv,
  logger: GatewayLogger,
  options: LedgerOwnerOptions = {},
): Promise<ClusterPrimaryDataPlane> {
  const settings = readSettings(environment);
  const { owner, ledger } = await openLedgerOwner(settings, environment, logger, options);
  const withoutRedis = settings.redisUrl === undefined;
  let broadcast: ((invalidation: KeyInvalidation) => void) | undefined;
  const handlers = primaryHandlers({
    keyStore: owner.keyStore,
    keyLookup: settings.keyLookup,
    responseStore: owner.responseStore,
    acceptUsage: (events: readonly UsageEvent[]) => {
      for (const event of events) owner.usageQueue.enqueue(event);
    },
    usageQuery: owner.usageQuery,
    ...(withoutRedis
      ? {
          cache: createMemoryKeyValueCache({ maxEntries: 200_000 }),
          limitStore: createMemoryLimitStore(),
          broadcastInvalidation: (invalidation) => broadcast?.(invalidation),
        }
      : {}),
  });
  return {
    handlers,
    usageQueue: owner.usageQueue,
    ledger,
    setBroadcast(next) {
      broadcast = next;
    },
    close: ({ timeoutMs }) => closeLedgerOwner(owner, ledger, logger, timeoutMs),
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
  // The primary checked Redis before forking; a worker started later (a replacement during a Redis outage) starts
  // without waiting and rides the outage out like the others.
  const redis =
    settings.redisUrl === undefined
      ? undefined
      : await openRedisParts(settings.redisUrl, logger, () => gapListeners.forEach((listener) => listener()), {
          waitForReady: false,
        });
  let canPersistUsage = true;
  rpc.onBroadcast(usageLedgerChannel, (payload) => {
    // Anything but `canPersist: false` reads as persisting (a malformed payload, none at all, included).
    canPersistUsage = payload?.canPersist !== false;
  });
  // Batches go to the primary's queue, which writes, retries and spills them; a short delay keeps what a killed
  // worker can lose small (see the README: at most ~100 ms of its usage events), and lets an event die young in V8's
  // heap rather than be copied to the old generation (database-accounting-stores.ts).
  const usageQueue = createUsageQueue({
    sink: createRemoteUsageSink(rpc),
    maxBatchSize: 200,
    maxDelayMs: 100,
  });
  // Logs only (readiness follows the primary's ledger): a primary that stops taking usage, and events lost here.
  const handOver = startUsageLedgerMonitor({ queue: usageQueue, logger, label: 'usage hand-over to the primary' });
  const tasks = closeTasks();
  return {
    canPersistUsage: () => canPersistUsage,
    onInvalidationGap: (listener) => void gapListeners.push(listener),
    onClose: tasks.add,
    keyStore: createRemoteKeyStore(rpc),
    keyLookup: settings.keyLookup,
    usageQuery: createRemoteUsageQuery(rpc),
    usageQueue,
    responseStore: createRemoteResponseStore(rpc),
    sharedCache: redis?.cache ?? createRemoteKeyValueCache(rpc),
    invalidations: redis?.bus ?? createClusterInvalidationBus(rpc),
    circuitBus: redis?.circuits ?? createClusterCircuitBus(rpc),
    limitStore: redis?.limitStore ?? createRemoteLimitStore(rpc),
    rateLimitMode: settings.rateLimitMode ?? 'leased',
    redisHost: settings.redisUrl === undefined ? undefined : new URL(settings.redisUrl).host,
    async close({ timeoutMs }) {
      await tasks.run();
      const flushed = await usageQueue.flush({ timeoutMs });
      handOver.stop();
      if (flushed.dropped > 0)
        logger.error('usage events lost at shutdown: the primary did not take them in time', {
          lost: flushed.dropped,
        });
      await redis?.close();
    },
  };
}
