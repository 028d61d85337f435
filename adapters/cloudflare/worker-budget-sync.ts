import type { BackgroundTimers } from '../../src/usage/usage-queue-timers.ts';

/**
 * Timers that never fire, for the budget tracker on Workers: a timer loop cannot run there (a timer lives only while
 * some request keeps its invocation alive), so the tracker's own loop stays idle and {@link createBudgetSyncDriver}
 * runs its `sync()` from requests instead.
 */
export const requestDrivenTimers: BackgroundTimers = {
  setTimeout: () => undefined,
  clearTimeout: () => {},
};

/** What {@link createBudgetSyncDriver} is made with. */
export interface BudgetSyncDriverOptions {
  /** The budget tracker's `sync()`: push local spend, read the shared totals, reconcile when due. */
  sync: () => Promise<void>;
  /** Least time between the starts of two syncs, ms (default 250, the tracker's push interval). */
  intervalMs?: number;
  /** Monotonic clock, ms (default `performance.now`). */
  now?: () => number;
}

/** Runs budget syncs on demand, at most one per interval. */
export interface BudgetSyncDriver {
  /**
   * Asks for a sync that starts after this call: at once when the last one started at least an interval ago and has
   * finished, otherwise when the interval is up. Concurrent asks share one sync. The promise settles when that sync
   * is done (it never rejects); hand it to `waitUntil` so the invocation lives until the spend is pushed.
   */
  request(): Promise<void>;
}

/**
 * Drives the budget tracker's background work from requests, the only place work can run on workerd: every request
 * asks for a sync when it starts (so an isolate that was idle refreshes the shared totals within one interval of
 * waking) and again when it records spend (so its spend is pushed within one interval), each time keeping its
 * invocation alive with `waitUntil` until that sync is done. An isolate that goes idle has therefore pushed all its
 * spend before workerd may evict it. A sync that fails (a Durable Object unreachable) keeps the spend pending in
 * memory for the next one; if no request ever comes to this isolate again, the ledger still has that spend and
 * reconciliation (every 60 s, in any isolate that serves the key) restores it.
 *
 * @example
 * ```ts
 * const driver = createBudgetSyncDriver({ sync: () => budgets.sync() });
 * context.waitUntil(driver.request());
 * ```
 */
export function createBudgetSyncDriver(options: BudgetSyncDriverOptions): BudgetSyncDriver {
  const intervalMs = options.intervalMs ?? 250;
  const now = options.now ?? (() => performance.now());
  let lastStartedAt = Number.NEGATIVE_INFINITY;
  let running: Promise<void> | undefined;
  let scheduled: Promise<void> | undefined;

  /** Waits until a sync may start: the interval since the last start, and the end of a sync still running. */
  const ready = async (): Promise<void> => {
    // A loop, not one timer: timers run on the event loop's cached clock and can fire a little before the interval
    // is up by `now()`.
    for (let wait = lastStartedAt + intervalMs - now(); wait > 0; wait = lastStartedAt + intervalMs - now()) {
      await new Promise<void>((resolve) => setTimeout(resolve, Math.max(1, Math.ceil(wait))));
    }
    // A sync still running may have pushed already: wait for it, so the spend behind this request is in the next one.
    while (running !== undefined) await running;
  };

  return {
    request() {
      if (scheduled !== undefined) return scheduled;
      // `then` runs its callback later, so `scheduled` is this promise before the callback can clear it.
      const next: Promise<void> = ready().then(async () => {
        if (scheduled === next) scheduled = undefined;
        lastStartedAt = now();
        const current = options.sync().catch(() => {});
        running = current;
        await current;
        if (running === current) running = undefined;
      });
      scheduled = next;
      return next;
    },
  };
}
