import type { Worker } from 'node:cluster';
import type { Redis } from 'ioredis';
import { parseSharedCircuitChange, type CircuitBus, type SharedCircuitChange } from '../../src/routing/circuit-bus.ts';
import type { GatewayLogger } from '../../src/services.ts';
import type { ClusterWorkerMessage, ClusterWorkerMessages } from './cluster-methods.ts';
import { broadcastToWorkers, type ClusterRpcClient } from './cluster-rpc.ts';
import { createRedisPubSubChannel, type RedisPubSubChannel } from './redis-pubsub-channel.ts';

/** The channel circuit changes travel on: Redis pub/sub, and the cluster primary's broadcasts to its workers. */
export const circuitChannel = 'torii:circuits';

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

/** The broadcast that ends a replay: every opening still running was sent to the worker before it. */
const circuitReplayedChannel = 'torii:circuits-replayed';

/**
 * A cluster worker's {@link CircuitBus} without Redis: changes go to the primary over IPC, which relays them to every
 * worker (see {@link createCircuitRelay}). `whenSubscribed` asks the primary for the openings still running and
 * resolves once they are applied, so a worker forked after a cooldown opened (a restart) never serves blind to it.
 *
 * @example
 * const bus = createClusterCircuitBus(createClusterRpcClient());
 */
export function createClusterCircuitBus(rpc: ClusterRpcClient): CircuitBus {
  return {
    publish(change) {
      if (process.send === undefined || !process.connected) return;
      process.send(
        { type: 'torii:circuit-relay', change } satisfies ClusterWorkerMessage<'torii:circuit-relay'>,
        undefined,
        {},
        () => {},
      );
    },
    subscribe: (listener) =>
      rpc.onBroadcast(circuitChannel, (payload) => {
        const change = parseSharedCircuitChange(payload);
        if (change !== undefined) listener(change);
      }),
    whenSubscribed: () =>
      new Promise<void>((resolve) => {
        if (process.send === undefined || !process.connected) return resolve();
        const stop = rpc.onBroadcast(circuitReplayedChannel, () => {
          stop();
          resolve();
        });
        process.send(
          { type: 'torii:circuit-replay' } satisfies ClusterWorkerMessage<'torii:circuit-replay'>,
          undefined,
          {},
          () => {},
        );
      }),
  };
}

/** The most openings the primary remembers for replay (a bound: deployment ids come from the config). */
const rememberedOpeningsLimit = 10_000;

/** The primary's circuit relay: {@link createCircuitRelay}. */
export interface CircuitRelay {
  /** Relays `worker`'s changes to every worker and answers its replay request. Call once per forked worker. */
  attach(worker: Worker): void;
}

/**
 * The primary's side: relays a worker's circuit change to every worker (the sender included; it ignores its own), and
 * remembers the openings still running so a worker that starts later (a restart, a replacement after a crash) hears
 * them before it listens. Anything else a worker sends is left to other listeners; a malformed change is dropped.
 *
 * @example
 * const relay = createCircuitRelay(() => Object.values(cluster.workers ?? {}));
 * cluster.on('fork', (worker) => relay.attach(worker));
 */
export function createCircuitRelay(workers: () => Iterable<Worker>, now: () => number = Date.now): CircuitRelay {
  const openings = new Map<string, SharedCircuitChange & { state: 'open' }>();
  const remember = (change: SharedCircuitChange) => {
    openings.delete(change.deploymentId);
    if (change.state === 'open' && openings.size < rememberedOpeningsLimit) openings.set(change.deploymentId, change);
  };
  const replay = (worker: Worker) => {
    const at = now();
    for (const [deploymentId, opening] of openings) {
      if (opening.openUntil <= at) openings.delete(deploymentId);
      else broadcastToWorkers([worker], circuitChannel, opening);
    }
    broadcastToWorkers([worker], circuitReplayedChannel, {});
  };
  return {
    attach(worker) {
      worker.on('message', (message: unknown) => {
        // Unchecked until here: the type decides, and the change is parsed (a malformed one is dropped).
        const typed = message as { type?: keyof ClusterWorkerMessages; change?: unknown } | null;
        if (typed?.type === 'torii:circuit-replay') return replay(worker);
        if (typed?.type !== 'torii:circuit-relay') return;
        const change = parseSharedCircuitChange(typed.change);
        if (change === undefined) return;
        remember(change);
        broadcastToWorkers(workers(), circuitChannel, change);
      });
    },
  };
}
