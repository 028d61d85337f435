import type { Worker } from 'node:cluster';
import type { Redis } from 'ioredis';
import { parseSharedCircuitChange, type CircuitBus, type SharedCircuitChange } from '../../src/routing/circuit-bus.ts';
import type { GatewayLogger } from '../../src/services.ts';
import { broadcastToWorkers, type ClusterRpcClient } from './cluster-rpc.ts';
import { createRedisPubSubChannel, type RedisPubSubChannel } from './redis-pubsub-channel.ts';

/** The channel circuit changes travel on: Redis pub/sub, and the cluster primary's broadcasts to its workers. */
export const circuitChannel = 'torii:circuits';

/** What a worker sends its primary to have a circuit change relayed to every worker. */
interface CircuitRelayMessage {
  type: 'torii:circuit-relay';
  change: SharedCircuitChange;
}

function parseCircuitText(text: string): SharedCircuitChange | undefined {
  try {
    return parseSharedCircuitChange(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** A {@link CircuitBus} over Redis with the controls a Redis-backed one needs. */
export interface RedisCircuitBus extends CircuitBus {
  whenSubscribed(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Circuit changes over Redis pub/sub, between every process of every instance that shares the Redis (see
 * redis-pubsub-channel.ts for delivery: at most once, resubscribed after reconnects). A publish that fails is logged
 * and dropped: each process still has its own breaker.
 *
 * @example
 * const bus = createRedisCircuitBus({ publisher: commands, subscriber, logger });
 */
export function createRedisCircuitBus(options: {
  publisher: Redis;
  subscriber: Redis;
  logger: GatewayLogger;
  channel?: string;
}): RedisCircuitBus {
  const channel: RedisPubSubChannel<SharedCircuitChange> = createRedisPubSubChannel({
    publisher: options.publisher,
    subscriber: options.subscriber,
    logger: options.logger,
    channel: options.channel ?? circuitChannel,
    label: 'circuit change',
    parse: parseCircuitText,
  });
  return {
    publish(change) {
      channel.publish(JSON.stringify(change)).catch((error: unknown) =>
        options.logger.warn('a circuit change could not be published', {
          deployment: change.deploymentId,
          error: String(error),
        }),
      );
    },
    subscribe: (listener) => channel.subscribe(listener),
    whenSubscribed: () => channel.whenSubscribed(),
    close: () => channel.close(),
  };
}

/**
 * A cluster worker's {@link CircuitBus} without Redis: changes go to the primary over IPC, which relays them to every
 * worker (see {@link relayCircuitChanges}).
 *
 * @example
 * const bus = createClusterCircuitBus(createClusterRpcClient());
 */
export function createClusterCircuitBus(rpc: ClusterRpcClient): CircuitBus {
  return {
    publish(change) {
      if (process.send === undefined || !process.connected) return;
      process.send({ type: 'torii:circuit-relay', change } satisfies CircuitRelayMessage, undefined, {}, () => {});
    },
    subscribe: (listener) =>
      rpc.onBroadcast(circuitChannel, (payload) => {
        const change = parseSharedCircuitChange(payload);
        if (change !== undefined) listener(change);
      }),
  };
}

/**
 * The primary's side: relays a worker's circuit change to every worker (the sender included; it ignores its own).
 * Anything else a worker sends is left to other listeners; a malformed change is dropped.
 */
export function relayCircuitChanges(worker: Worker, workers: () => Iterable<Worker>): void {
  worker.on('message', (message: unknown) => {
    const typed = message as Partial<CircuitRelayMessage> | null;
    if (typed?.type !== 'torii:circuit-relay') return;
    const change = parseSharedCircuitChange(typed.change);
    if (change !== undefined) broadcastToWorkers(workers(), circuitChannel, change);
  });
}
