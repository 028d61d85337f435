import { Redis, type RedisOptions } from 'ioredis';
import type { GatewayLogger } from '../../src/services.ts';

/** What {@link openRedisConnection} and {@link openRedisSubscriberConnection} are made with. */
export interface RedisConnectionOptions {
  /** Where connection trouble is reported: once when it starts, once when the connection is back. */
  logger: GatewayLogger;
  /** Shown by `CLIENT LIST` (`torii`, `torii-subscriber`). */
  connectionName?: string;
  /** How long a command may wait for its reply before it rejects, in ms (command connection only). Default 500. */
  commandTimeoutMs?: number;
}

/**
 * Reconnect forever, backing off exponentially from 50 ms to 2 s, with up to 25% jitter so a fleet of workers does
 * not reconnect in lockstep after a Redis restart.
 */
function reconnectDelay(attempt: number): number {
  const base = Math.min(2_000, 50 * 2 ** Math.min(attempt, 6));
  return Math.round(base * (1 + Math.random() / 4));
}

/**
 * Reports the start of an outage (the first error, or the first reconnect after losing a ready connection) and the
 * recovery, instead of one log line per reconnect attempt. Also keeps ioredis from printing "Unhandled error event"
 * (it does when no `error` listener is attached). `quit()` and `disconnect()` do not reconnect, so they log nothing.
 */
function reportConnectionTrouble(redis: Redis, logger: GatewayLogger, name: string): void {
  let unavailable = false;
  const report = (error: Error | undefined) => {
    if (unavailable) return;
    unavailable = true;
    logger.warn('redis connection unavailable; retrying in the background', {
      connection: name,
      ...(error === undefined ? {} : { error: error.message }),
    });
  };
  redis.on('error', (error: Error) => report(error));
  redis.on('reconnecting', () => report(undefined));
  redis.on('ready', () => {
    if (!unavailable) return;
    unavailable = false;
    logger.info('redis connection restored', { connection: name });
  });
}

/** Options both connections share. */
function commonOptions(name: string): RedisOptions {
  return {
    connectionName: name,
    // Connect at start: the first request should not pay for the handshake, and a wrong URL shows in the log at once.
    lazyConnect: false,
    connectTimeout: 2_000,
    retryStrategy: reconnectDelay,
    // TCP keep-alive probes from 10 s of silence, so a dead peer is noticed sooner than the 30 s default.
    keepAlive: 10_000,
  };
}

/**
 * Opens the ioredis connection for commands (the shared cache, limit counters, publishing invalidations) from
 * `REDIS_URL` (`redis://`, or `rediss://` for TLS; user, password and database number in the URL).
 *
 * The gateway must keep serving from its memory tier while Redis is down, so this connection fails fast and never
 * makes a request wait for Redis to come back:
 *
 * - `enableOfflineQueue: false`: while disconnected, a command rejects at once instead of queueing until the
 *   connection returns (ioredis's default would hold every request that misses the local tier for as long as the
 *   outage lasts). This includes the few milliseconds between start and the first `ready`.
 * - `maxRetriesPerRequest: 0`: a command in flight when the connection drops rejects instead of being replayed on the
 *   next connection. A replayed cache write could land after a newer one made meanwhile by another process.
 * - `commandTimeout` (500 ms by default): a Redis that accepts the connection but does not answer (overloaded, or
 *   a network that drops packets without a reset) costs a request at most this long.
 * - `lazyConnect: false` and a reconnect strategy that never gives up (50 ms doubling to 2 s, with jitter):
 *   the connection comes back by itself when Redis does.
 *
 * Callers treat a rejected call as a miss (reads) or a skipped write, never as a failed request.
 *
 * @example
 * ```ts
 * const redis = openRedisConnection(process.env.REDIS_URL!, { logger: consoleLogger });
 * const cache = createRedisKeyValueCache(redis, { prefix: 'torii:kv:' });
 * // at shutdown
 * await redis.quit();
 * ```
 */
export function openRedisConnection(url: string, options: RedisConnectionOptions): Redis {
  const name = options.connectionName ?? 'torii';
  const redis = new Redis(url, {
    ...commonOptions(name),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs ?? 500,
  });
  reportConnectionTrouble(redis, options.logger, name);
  return redis;
}

/**
 * Opens a dedicated connection for pub/sub (a subscribed connection can run nothing but subscription commands and
 * PING). Unlike the command connection it waits for Redis rather than failing fast: `SUBSCRIBE` issued before the
 * connection is up is queued and sent once it is (`enableOfflineQueue: true`, `maxRetriesPerRequest: null`), and no
 * command timeout applies, because a quiet subscriber is normal. Resubscribing after a reconnect, and noticing a
 * connection that died silently, are the job of `createRedisKeyInvalidationBus`.
 *
 * @example
 * ```ts
 * const bus = createRedisKeyInvalidationBus({
 *   publisher: openRedisConnection(url, { logger }),
 *   subscriber: openRedisSubscriberConnection(url, { logger }),
 *   logger,
 * });
 * ```
 */
export function openRedisSubscriberConnection(url: string, options: RedisConnectionOptions): Redis {
  const name = options.connectionName ?? 'torii-subscriber';
  const redis = new Redis(url, {
    ...commonOptions(name),
    enableOfflineQueue: true,
    maxRetriesPerRequest: null,
    // The bus subscribes again itself on every `ready`, so it knows when the subscription is back.
    autoResubscribe: false,
  });
  reportConnectionTrouble(redis, options.logger, name);
  return redis;
}

/**
 * Resolves once the connection is ready for commands (at once if it already is); rejects after `timeoutMs`. The
 * command connection rejects commands until then, so a server may await this before it starts listening; a server
 * that would rather start without Redis can skip it.
 *
 * @example
 * ```ts
 * await whenRedisReady(redis, 5_000).catch((error) => logger.warn('starting without redis', { error: error.message }));
 * ```
 */
export function whenRedisReady(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error(`redis was not ready within ${timeoutMs} ms (status: ${redis.status})`));
    }, timeoutMs);
    redis.once('ready', onReady);
  });
}
