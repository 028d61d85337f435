/**
 * Key invalidations over Redis pub/sub: how a revoked or changed key reaches every Node process (cluster workers and
 * other instances) within milliseconds.
 *
 * Delivery is at most once. Redis pub/sub keeps nothing: a message published while a subscriber is disconnected
 * (Redis restarting, a network fault, the subscriber reconnecting) never reaches it. What bounds staleness then:
 *
 * 1. The bus subscribes again on every reconnect and then calls `onResubscribed`; the key lookup passes a callback
 *    that clears its in-process LRU, so whatever was missed while disconnected is read again from the shared cache
 *    or the database. With it, a missed invalidation lasts at most as long as the outage plus one reconnect.
 * 2. A connection that dies without the socket noticing (a half-open TCP connection after a network fault) delivers
 *    nothing and reports nothing. A heartbeat PING every `heartbeatIntervalMs` (5 s by default) that gets no answer
 *    within `heartbeatTimeoutMs` (2 s) drops the connection and reconnects, which leads to 1.
 * 3. As the last safety net, in-process LRU entries carry a TTL of their own: no local entry outlives it, whatever
 *    happened to the bus.
 *
 * Messages are JSON, `{"hashes": ["<sha-256 hex>", ...], "version": <n>}` on channel `torii:key-invalidation`; a
 * message that does not parse or validate is logged and ignored, never handed to listeners.
 */
import type { Redis } from 'ioredis';
import * as z from 'zod/mini';
import type { KeyInvalidation, KeyInvalidationBus } from '../../src/auth/key-invalidation.ts';
import type { GatewayLogger } from '../../src/services.ts';
import { createRedisPubSubChannel } from './redis-pubsub-channel.ts';

/** The pub/sub channel key invalidations travel on. */
export const keyInvalidationChannel = 'torii:key-invalidation';

const keyInvalidationSchema = z.object({
  hashes: z.array(z.string().check(z.minLength(1), z.maxLength(256))).check(z.maxLength(1_000)),
  version: z.int().check(z.gte(0)),
});

/** The invalidation a message carries, or undefined when it is not JSON of the expected shape. */
export function parseKeyInvalidationMessage(message: string): KeyInvalidation | undefined {
  let json: unknown;
  try {
    json = JSON.parse(message);
  } catch {
    return undefined;
  }
  const parsed = keyInvalidationSchema.safeParse(json);
  return parsed.success ? { hashes: parsed.data.hashes, version: parsed.data.version } : undefined;
}

/** What {@link createRedisKeyInvalidationBus} is made with. */
export interface RedisKeyInvalidationBusOptions {
  /** A command connection (`openRedisConnection`); PUBLISH goes through it. */
  publisher: Redis;
  /** A connection of its own (`openRedisSubscriberConnection`); the bus subscribes on it and nothing else uses it. */
  subscriber: Redis;
  logger: GatewayLogger;
  /** Defaults to {@link keyInvalidationChannel}; tests use their own. */
  channel?: string;
  /**
   * Called each time the subscription is confirmed again after a reconnect. Invalidations published while the
   * subscriber was away are lost, so the caller drops what it cached locally (see the module comment).
   */
  onResubscribed?: () => void;
  /** How often the subscriber connection is checked with a PING, in ms; 0 turns the check off. Default 5000. */
  heartbeatIntervalMs?: number;
  /** How long a PING may go unanswered before the connection is dropped and made again, in ms. Default 2000. */
  heartbeatTimeoutMs?: number;
}

/** A {@link KeyInvalidationBus} with the controls a Redis-backed one needs. */
export interface RedisKeyInvalidationBus extends KeyInvalidationBus {
  /**
   * Resolves once Redis has confirmed the current subscription (at once when nobody listens). Publishing before then
   * may not reach this process's listeners; startup and tests await it.
   */
  whenSubscribed(): Promise<void>;
  /** Stops the heartbeat, unsubscribes and drops every listener. The connections stay open: they are the caller's. */
  close(): Promise<void>;
}

/**
 * A {@link KeyInvalidationBus} over Redis pub/sub, with a dedicated subscriber connection. Every listener of every
 * process sees every invalidation, this process's own included (they come back through Redis).
 *
 * @example
 * ```ts
 * const bus = createRedisKeyInvalidationBus({
 *   publisher: openRedisConnection(url, { logger }),
 *   subscriber: openRedisSubscriberConnection(url, { logger }),
 *   logger,
 *   onResubscribed: () => localKeys.clear(),
 * });
 * bus.subscribe(({ hashes }) => hashes.forEach((hash) => localKeys.delete(hash)));
 * await bus.whenSubscribed();
 * await bus.publish({ hashes: [record.hash], version: record.version });
 * ```
 */
export function createRedisKeyInvalidationBus(options: RedisKeyInvalidationBusOptions): RedisKeyInvalidationBus {
  const channel = createRedisPubSubChannel({
    ...options,
    channel: options.channel ?? keyInvalidationChannel,
    label: 'key invalidation',
    parse: parseKeyInvalidationMessage,
  });
  return {
    async publish(invalidation) {
      const checked = keyInvalidationSchema.safeParse(invalidation);
      if (!checked.success) throw new TypeError(`not a valid key invalidation: ${JSON.stringify(invalidation)}`);
      await channel.publish(JSON.stringify({ hashes: invalidation.hashes, version: invalidation.version }));
    },
    subscribe: (listener) => channel.subscribe(listener),
    whenSubscribed: () => channel.whenSubscribed(),
    close: () => channel.close(),
  };
}
