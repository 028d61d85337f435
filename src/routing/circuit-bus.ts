import * as z from 'zod/mini';

/**
 * A circuit change as it travels between processes: times are wall-clock epoch ms (monotonic clocks differ between
 * processes), and `origin` names the process that saw it, which ignores its own change when the bus echoes it back.
 */
export type SharedCircuitChange =
  | { origin: string; deploymentId: string; state: 'open'; openUntil: number }
  | { origin: string; deploymentId: string; state: 'closed' };

/**
 * How circuit openings and closings reach the other processes of a deployment of the gateway: the cluster primary
 * relays them between workers, Redis pub/sub between instances. Delivery is best effort and at most once: a missed
 * change costs the receiving process its own first few failures, nothing more. `publish` never throws and never
 * waits: it runs off the request path.
 */
export interface CircuitBus {
  publish(change: SharedCircuitChange): void;
  /** Calls `listener` for every change any process published (this one's included); returns unsubscribe. */
  subscribe(listener: (change: SharedCircuitChange) => void): () => void;
  /**
   * Resolves once the subscriptions made so far receive other processes' changes (Redis has confirmed its SUBSCRIBE);
   * a server waits for it before it reports ready, so it never serves blind to cooldowns opened elsewhere. A bus may
   * also deliver the openings still running before it resolves (the cluster primary replays them to a new worker).
   * Buses that deliver at once and remember nothing (in-process) need not implement it.
   */
  whenSubscribed?(): Promise<void>;
}

const sharedCircuitChangeSchema = z.union([
  z.object({
    origin: z.string().check(z.maxLength(100)),
    deploymentId: z.string().check(z.minLength(1), z.maxLength(1000)),
    state: z.literal('open'),
    openUntil: z.number().check(z.gte(0)),
  }),
  z.object({
    origin: z.string().check(z.maxLength(100)),
    deploymentId: z.string().check(z.minLength(1), z.maxLength(1000)),
    state: z.literal('closed'),
  }),
]);

/** A change read from a message (a bus's wire), or undefined when it is not one. */
export function parseSharedCircuitChange(value: unknown): SharedCircuitChange | undefined {
  const parsed = sharedCircuitChangeSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
