import type { UsageEvent } from './usage-event.ts';

/**
 * How a usage sink gives the event loop back while it encodes a batch. Encoding 500 events in one go (JSON for
 * Postgres, bound values for SQLite) holds the request thread for 1.5-2.5 ms twice a second at 1,000 requests a
 * second, and every request arriving meanwhile waits for it; in slices of 50 the longest hold is ~0.2 ms.
 */
export interface UsageSinkTurnOptions {
  /** Events encoded in one turn of the event loop (default {@link defaultEventsPerTurn}). */
  eventsPerTurn?: number;
  /**
   * Resolves on a later turn of the event loop, after the I/O waiting now. Defaults to a zero-delay `setTimeout`
   * (which Node stretches to 1 ms); the Node adapter passes `setImmediate`.
   */
  nextTurn?: () => Promise<void>;
}

/** Events per slice when a sink is not told otherwise: ~0.2 ms of encoding on a 2020s server core. */
export const defaultEventsPerTurn = 50;

/** A later turn of the event loop in any runtime: a zero-delay timer. */
export const nextTurnByTimer = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Calls `encode` with consecutive slices of `events` (at most `eventsPerTurn` each, in order), waiting for the next
 * turn of the event loop between two slices. An error thrown by `encode` stops it and is thrown as it is.
 *
 * @example
 * ```ts
 * const parts: string[] = [];
 * await forEachSliceOfEvents(events, {}, (slice) => void parts.push(JSON.stringify(slice)));
 * ```
 */
export async function forEachSliceOfEvents(
  events: readonly UsageEvent[],
  options: UsageSinkTurnOptions,
  encode: (slice: readonly UsageEvent[]) => void,
): Promise<void> {
  const eventsPerTurn = Math.max(1, Math.floor(options.eventsPerTurn ?? defaultEventsPerTurn));
  const nextTurn = options.nextTurn ?? nextTurnByTimer;
  for (let start = 0; start < events.length; start += eventsPerTurn) {
    if (start > 0) await nextTurn();
    encode(start === 0 && events.length <= eventsPerTurn ? events : events.slice(start, start + eventsPerTurn));
  }
}
