import { describe, expect, it } from 'vitest';
import { createMemoryKeyValueCache } from '../../src/cache/memory-key-value-cache.ts';
import { createCacheSpendCounters } from '../../src/limits/budget-spend-counters.ts';
import { budgetCounterTtlSeconds, budgetPeriodWindow } from '../../src/limits/budget-period.ts';
import { createBudgetTracker } from '../../src/limits/budget-tracker.ts';
import { createBudgetSyncDriver, requestDrivenTimers } from './worker-budget-sync.ts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A sync that takes `durationMs` and notes when each run started (by `startedAt`, default the clock now) and ended.
 */
function timedSync(durationMs: number, startedAt: () => number = () => performance.now()) {
  const runs: { startedAt: number; endedAt: number }[] = [];
  return {
    runs,
    async sync() {
      const run = { startedAt: startedAt(), endedAt: Number.POSITIVE_INFINITY };
      runs.push(run);
      await sleep(durationMs);
      run.endedAt = performance.now();
    },
  };
}

describe('createBudgetSyncDriver', () => {
  it('answers every request with a sync that starts after it, one at a time, at most one per interval', async () => {
    // A run starts when the driver read its clock to start it: the driver's own reading, not a second one taken
    // inside the sync, which a GC pause between the two (3 ms on a loaded CI machine) would move later.
    let lastClockReading = 0;
    const clock = (): number => (lastClockReading = performance.now());
    const probe = timedSync(30, () => lastClockReading);
    const driver = createBudgetSyncDriver({ sync: () => probe.sync(), intervalMs: 50, now: clock });
    const asked: { at: number; done: Promise<void> }[] = [];
    for (let index = 0; index < 12; index++) {
      asked.push({ at: performance.now(), done: driver.request() });
      await sleep(13);
    }
    const answeredBy = await Promise.all(
      asked.map(async ({ at, done }) => {
        await done;
        // The sync that answered this request: the last one that had finished when its promise settled.
        const finished = probe.runs.filter((run) => run.endedAt <= performance.now());
        return { at, run: finished[finished.length - 1] };
      }),
    );
    for (const { at, run } of answeredBy) expect(run?.startedAt).toBeGreaterThanOrEqual(at);
    for (let index = 1; index < probe.runs.length; index++) {
      const previous = probe.runs[index - 1] as { startedAt: number; endedAt: number };
      const current = probe.runs[index] as { startedAt: number; endedAt: number };
      expect(current.startedAt).toBeGreaterThanOrEqual(previous.endedAt);
      expect(current.startedAt - previous.startedAt).toBeGreaterThanOrEqual(49);
    }
    // 12 requests over ~160 ms: shared, not one sync each.
    expect(probe.runs.length).toBeLessThan(6);
  });

  it('never rejects, and asks for the next sync normally after a failed one', async () => {
    let calls = 0;
    const driver = createBudgetSyncDriver({
      sync: async () => {
        calls++;
        if (calls === 1) throw new Error('Durable Object unreachable');
      },
      intervalMs: 1,
    });
    await expect(driver.request()).resolves.toBeUndefined();
    await expect(driver.request()).resolves.toBeUndefined();
    expect(calls).toBe(2);
  });

  it('drives a budget tracker whose own loop never runs: spend recorded before a request is pushed when it settles', async () => {
    const cache = createMemoryKeyValueCache({ maxEntries: 1_000 });
    const counters = createCacheSpendCounters({ cache, processId: 'reader' });
    const tracker = createBudgetTracker({
      cache,
      reconcile: async (keyIds) => new Map(keyIds.map((keyId) => [keyId, 0])),
      timers: requestDrivenTimers,
    });
    const key = { id: 'key_sync', budget: { amountUsd: 10, period: 'total' as const } };
    await tracker.check(key);
    const now = Date.now();
    const window = budgetPeriodWindow('total', now);
    const counter = { keyId: key.id, periodLabel: window.label, ttlSeconds: budgetCounterTtlSeconds(window, now) };
    const driver = createBudgetSyncDriver({ sync: () => tracker.sync(), intervalMs: 20 });

    tracker.record(key.id, 1.5);
    await sleep(60); // the tracker's own timers never fire: nothing is pushed without the driver
    expect(await counters.read(counter)).toBe(0);
    await driver.request();
    expect(await counters.read(counter)).toBeCloseTo(1.5, 9);
    // Spend recorded while a sync runs is in the sync the next request gets.
    const first = driver.request();
    tracker.record(key.id, 2);
    const second = driver.request();
    await Promise.all([first, second]);
    expect(await counters.read(counter)).toBeCloseTo(3.5, 9);
    await tracker.close();
  });
});
