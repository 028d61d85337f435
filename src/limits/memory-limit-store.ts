import type { LimitLease, LimitStore } from './limit-store.ts';

/**
 * A {@link LimitStore} in process memory: exact and shared by every limiter in one process (one isolate), shared
 * with nothing else. For tests, and for single-process deployments that want the `leased` or `strict` limiter over
 * one store; the limiter's own `local` mode needs no store at all.
 *
 * It keeps no clock of its own (callers may inject theirs): a window is forgotten once a lease, release or add names
 * a window of the same length that starts at or after its end, so memory holds only the counters of the current
 * window (and of the one before, until the first call of the next window sweeps it).
 *
 * @example
 * ```ts
 * const limiter = createRateLimiter({ mode: 'strict', store: createMemoryLimitStore() });
 * ```
 */
export function createMemoryLimitStore(): LimitStore {
  /** `counter`, NUL, `windowStart`, NUL, `windowMs` -> units used in that window. */
  const counters = new Map<string, { used: number; windowEnd: number }>();
  /** The latest window start named so far, per window length. */
  const latestStartByLength = new Map<number, number>();

  const entryKey = (counter: string, windowStart: number, windowMs: number): string =>
    `${counter}\u0000${windowStart}\u0000${windowMs}`;

  /** Forgets every window (of this length) that ended at or before `windowStart`, once per new window. */
  const sweep = (windowStart: number, windowMs: number): void => {
    const latest = latestStartByLength.get(windowMs);
    if (latest !== undefined && latest >= windowStart) return;
    latestStartByLength.set(windowMs, windowStart);
    const suffix = `\u0000${windowMs}`;
    for (const [key, entry] of counters) {
      if (entry.windowEnd <= windowStart && key.endsWith(suffix)) counters.delete(key);
    }
  };

  const entryFor = (counter: string, windowStart: number, windowMs: number) => {
    sweep(windowStart, windowMs);
    const key = entryKey(counter, windowStart, windowMs);
    let entry = counters.get(key);
    if (entry === undefined) {
      entry = { used: 0, windowEnd: windowStart + windowMs };
      counters.set(key, entry);
    }
    return entry;
  };

  return {
    lease({ counter, windowStart, windowMs, amount, limit, minimum = 1 }): Promise<LimitLease> {
      const entry = entryFor(counter, windowStart, windowMs);
      const remaining = limit - entry.used;
      const granted = remaining >= Math.max(minimum, 1) ? Math.min(amount, remaining) : 0;
      entry.used += granted;
      return Promise.resolve({ granted, used: entry.used });
    },
    release({ counter, windowStart, windowMs, amount }): Promise<void> {
      sweep(windowStart, windowMs);
      const entry = counters.get(entryKey(counter, windowStart, windowMs));
      if (entry !== undefined) entry.used = Math.max(0, entry.used - amount);
      return Promise.resolve();
    },
    add({ counter, windowStart, windowMs, amount }): Promise<void> {
      entryFor(counter, windowStart, windowMs).used += amount;
      return Promise.resolve();
    },
  };
}
