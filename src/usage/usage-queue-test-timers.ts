import type { BackgroundTimers } from './usage-queue-timers.ts';

/** A clock that only moves when a test says so. For tests of background work; not used by the gateway. */
export interface ManualTimers {
  timers: BackgroundTimers;
  /** The manual clock, in ms. */
  now(): number;
  /** Moves the clock forward, running each timer that falls due (in time order) and letting promises settle. */
  advance(ms: number): Promise<void>;
  /** Lets pending promise callbacks run without moving the clock. */
  settle(): Promise<void>;
  /** How many timers are scheduled. */
  pending(): number;
}

/**
 * Manual timers for tests of the usage queue and the budget tracker.
 *
 * @example
 * ```ts
 * const clock = createManualTimers();
 * const queue = createUsageQueue({ sink, timers: clock.timers, now: clock.now });
 * await clock.advance(1000);
 * ```
 */
export function createManualTimers(start = 0): ManualTimers {
  let current = start;
  let nextId = 1;
  const scheduled = new Map<number, { at: number; callback: () => void }>();

  // A real macrotask: every promise callback queued before it has run by the time it fires.
  const settle = () => new Promise<void>((resolve) => globalThis.setTimeout(resolve, 0));

  return {
    timers: {
      setTimeout(callback, delayMs) {
        const id = nextId++;
        scheduled.set(id, { at: current + Math.max(0, delayMs), callback });
        return id;
      },
      clearTimeout(handle) {
        scheduled.delete(handle as number);
      },
    },
    now: () => current,
    async advance(ms) {
      const target = current + ms;
      await settle();
      for (;;) {
        let dueId: number | undefined;
        let due: { at: number; callback: () => void } | undefined;
        for (const [id, timer] of scheduled) {
          if (timer.at <= target && (due === undefined || timer.at < due.at)) {
            dueId = id;
            due = timer;
          }
        }
        if (dueId === undefined || due === undefined) break;
        scheduled.delete(dueId);
        current = due.at;
        due.callback();
        await settle();
      }
      current = target;
      await settle();
    },
    settle,
    pending: () => scheduled.size,
  };
}
