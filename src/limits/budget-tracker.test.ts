import { describe, expect, it } from 'vitest';
import type { KeyBudget } from '../auth/virtual-key-record.ts';
import type { KeyValueCache } from '../cache/key-value-cache.ts';
import { createMemoryKeyValueCache } from '../cache/memory-key-value-cache.ts';
import { isGatewayError, type GatewayError } from '../errors.ts';
import type { GatewayLogger } from '../services.ts';
import { createManualTimers, type ManualTimers } from '../usage/usage-queue-test-timers.ts';
import { createBudgetTracker, type BudgetStatus, type BudgetTrackerOptions } from './budget-tracker.ts';

const start = Date.parse('2025-06-15T12:00:00Z');

/** An in-memory ledger of (key, time, cost) rows, summed as UsageQuery.spendByKey does. */
function createLedger() {
  const rows: { keyId: string; startedAt: number; costUsd: number }[] = [];
  const calls: { keyIds: readonly string[]; since: number }[] = [];
  return {
    rows,
    calls,
    async spendByKey(keyIds: readonly string[], since: number) {
      calls.push({ keyIds: [...keyIds], since });
      const spend = new Map(keyIds.map((keyId) => [keyId, 0]));
      for (const row of rows) {
        if (row.startedAt >= since && spend.has(row.keyId))
          spend.set(row.keyId, (spend.get(row.keyId) ?? 0) + row.costUsd);
      }
      return spend;
    },
  };
}

function createWorld() {
  const clock = createManualTimers(start);
  const cache = createMemoryKeyValueCache({ maxEntries: 10_000, now: clock.now });
  const ledger = createLedger();
  const warnings: string[] = [];
  const logger: GatewayLogger = { info() {}, warn: (message) => void warnings.push(message), error() {} };
  const process = (overrides: Partial<BudgetTrackerOptions> = {}) =>
    createBudgetTracker({
      cache,
      reconcile: ledger.spendByKey,
      now: clock.now,
      timers: clock.timers,
      logger,
      ...overrides,
    });
  return { clock, cache, ledger, warnings, process };
}

const key = (id: string, budget: KeyBudget | null) => ({ id, budget });
const monthly = (amountUsd: number): KeyBudget => ({ amountUsd, period: 'month' });

/** The status, asserting it was answered synchronously. */
function syncStatus(status: BudgetStatus | undefined | Promise<BudgetStatus | undefined>): BudgetStatus | undefined {
  expect(status).not.toBeInstanceOf(Promise);
  return status as BudgetStatus | undefined;
}

async function caught(action: () => unknown): Promise<GatewayError> {
  try {
    await action();
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

describe('createBudgetTracker on one process', () => {
  it('answers undefined at once for a key without a budget', () => {
    const { process } = createWorld();
    expect(process().check(key('key_free', null))).toBeUndefined();
    expect(process().enforce(key('key_free', null))).toBeUndefined();
  });

  it('loads an unseen key once, from the ledger when the cache has nothing, then answers from memory', async () => {
    const { process, ledger } = createWorld();
    ledger.rows.push(
      { keyId: 'key_1', startedAt: Date.parse('2025-06-02T00:00:00Z'), costUsd: 3 },
      { keyId: 'key_1', startedAt: Date.parse('2025-05-31T23:59:59Z'), costUsd: 100 },
    );
    const tracker = process();
    const first = tracker.check(key('key_1', monthly(10)));
    const concurrent = tracker.check(key('key_1', monthly(10)));
    expect(first).toBeInstanceOf(Promise);
    expect((await first)?.spentUsd).toBe(3);
    expect((await concurrent)?.spentUsd).toBe(3);
    expect(ledger.calls).toEqual([{ keyIds: ['key_1'], since: Date.parse('2025-06-01T00:00:00Z') }]);
    expect(syncStatus(tracker.check(key('key_1', monthly(10))))).toMatchObject({ spentUsd: 3, exceeded: false });
  });

  it('counts its own spend at once and refuses the key once the budget is spent', async () => {
    const { process } = createWorld();
    const tracker = process();
    await tracker.enforce(key('key_1', monthly(1)));
    tracker.record('key_1', 0.6);
    expect(tracker.enforce(key('key_1', monthly(1)))).toBeUndefined();
    tracker.record('key_1', 0.4);
    const error = await caught(() => tracker.enforce(key('key_1', monthly(1))));
    expect(error).toMatchObject({ status: 429, type: 'insufficient_quota', code: 'budget_exceeded' });
    expect(error.message).toContain('spent $1.00 of the $1.00 monthly budget');
    // Raising the budget takes effect with the next check.
    expect(syncStatus(tracker.check(key('key_1', monthly(5))))?.exceeded).toBe(false);
  });

  it('ignores costs that are not positive and keys it never checked', async () => {
    const { process } = createWorld();
    const tracker = process();
    await tracker.check(key('key_1', monthly(1)));
    for (const cost of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) tracker.record('key_1', cost);
    tracker.record('key_unknown', 5);
    expect(syncStatus(tracker.check(key('key_1', monthly(1))))?.spentUsd).toBe(0);
  });

  it('starts a new period from zero, pushing the old period’s last spend to its own counter', async () => {
    const { process, clock, cache } = createWorld();
    const tracker = process({ pushIntervalMs: 60_000, idleAfterMs: 86_400_000 });
    const daily = key('key_1', { amountUsd: 2, period: 'day' });
    await tracker.check(daily);
    await clock.advance(Date.parse('2025-06-15T23:59:59Z') - clock.now());
    tracker.record('key_1', 2);
    expect(syncStatus(tracker.check(daily))?.exceeded).toBe(true);
    await clock.advance(1000);
    expect(syncStatus(tracker.check(daily))).toMatchObject({ spentUsd: 0, exceeded: false });
    expect(syncStatus(tracker.check(daily))?.window.label).toBe('2025-06-16');
    await clock.settle();
    expect(JSON.parse((await cache.get('torii:spend:key_1:2025-06-15:0')) ?? '{}').usd).toBe(2);
  });

  it('starts over when a key’s budget period changes', async () => {
    const { process, ledger } = createWorld();
    ledger.rows.push({ keyId: 'key_1', startedAt: Date.parse('2025-06-03T00:00:00Z'), costUsd: 4 });
    const tracker = process();
    expect((await tracker.check(key('key_1', monthly(10))))?.spentUsd).toBe(4);
    const weekly = tracker.check(key('key_1', { amountUsd: 10, period: 'week' }));
    expect(weekly).toBeInstanceOf(Promise);
    expect((await weekly)?.spentUsd).toBe(0);
  });

  it('fails open with a warning when the cache is down at first load, and catches up when it is back', async () => {
    const { clock, cache, ledger, warnings, process } = createWorld();
    let down = true;
    const flaky: KeyValueCache = {
      get: (name) => (down ? Promise.reject(new Error('cache down')) : cache.get(name)),
      set: (name, value, options) => (down ? Promise.reject(new Error('cache down')) : cache.set(name, value, options)),
      setIfAbsent: (name, value, options) =>
        down ? Promise.reject(new Error('cache down')) : cache.setIfAbsent(name, value, options),
      delete: (name) => (down ? Promise.reject(new Error('cache down')) : cache.delete(name)),
    };
    ledger.rows.push({ keyId: 'key_1', startedAt: start - 1000, costUsd: 9 });
    const tracker = process({ cache: flaky });
    expect((await tracker.check(key('key_1', monthly(10))))?.spentUsd).toBe(0);
    tracker.record('key_1', 0.5);
    await clock.advance(250);
    expect(warnings.some((warning) => warning.includes('could not push'))).toBe(true);
    down = false;
    await clock.advance(250);
    // The pending half dollar was pushed and the ledger reconciled in; the ledger does not have the half dollar yet
    // and reconciliation takes the larger of counter and ledger, so this is a lower bound until the next one.
    expect(syncStatus(tracker.check(key('key_1', monthly(10))))?.spentUsd).toBe(9);
    ledger.rows.push({ keyId: 'key_1', startedAt: start, costUsd: 0.5 });
    await clock.advance(60_000);
    expect(syncStatus(tracker.check(key('key_1', monthly(10))))?.spentUsd).toBe(9.5);
    await tracker.close();
  });

  it('forgets idle keys after pushing their spend', async () => {
    const { clock, ledger, process } = createWorld();
    const tracker = process({ idleAfterMs: 10_000 });
    await tracker.check(key('key_1', monthly(10)));
    tracker.record('key_1', 1);
    await clock.advance(11_000);
    ledger.calls.length = 0;
    // Forgotten: the next check loads again, from the shared counter this time (no ledger read needed).
    const again = tracker.check(key('key_1', monthly(10)));
    expect(again).toBeInstanceOf(Promise);
    expect((await again)?.spentUsd).toBe(1);
    expect(ledger.calls).toEqual([]);
  });

  it('keeps at most maxKeys keys, forgetting the least recently checked, however often one key repeats', async () => {
    const { clock, process } = createWorld();
    const tracker = process({ maxKeys: 2 });
    await tracker.check(key('key_a', monthly(10)));
    // The same key again and again (the common case, answered without reordering anything), then another.
    syncStatus(tracker.check(key('key_a', monthly(10))));
    syncStatus(tracker.check(key('key_a', monthly(10))));
    await tracker.check(key('key_b', monthly(10)));
    syncStatus(tracker.check(key('key_b', monthly(10))));
    // `key_a` is checked again, so `key_b` is now the least recently checked.
    syncStatus(tracker.check(key('key_a', monthly(10))));
    await tracker.check(key('key_c', monthly(10)));
    await clock.advance(1_000);
    expect(tracker.check(key('key_a', monthly(10)))).not.toBeInstanceOf(Promise);
    expect(tracker.check(key('key_c', monthly(10)))).not.toBeInstanceOf(Promise);
    expect(tracker.check(key('key_b', monthly(10)))).toBeInstanceOf(Promise);
  });
});

describe('createBudgetTracker across processes', () => {
  async function twoProcesses() {
    const world = createWorld();
    const first = world.process({ processId: 'process-a' });
    const second = world.process({ processId: 'process-b' });
    await first.check(key('key_1', monthly(10)));
    await second.check(key('key_1', monthly(10)));
    return { ...world, first, second };
  }

  async function spentBy(tracker: ReturnType<ReturnType<typeof createWorld>['process']>, clock: ManualTimers) {
    await clock.settle();
    return syncStatus(tracker.check(key('key_1', monthly(10))))?.spentUsd;
  }

  it('sees another process’s spend within one push and one refresh (1.25 s), not per request', async () => {
    const { clock, first, second, ledger } = await twoProcesses();
    ledger.calls.length = 0;
    first.record('key_1', 6);
    expect(await spentBy(second, clock)).toBe(0);
    await clock.advance(1250);
    expect(await spentBy(second, clock)).toBe(6);
    second.record('key_1', 4);
    // Its own spend counts at once: 6 + 4 reaches the budget.
    expect(syncStatus(second.check(key('key_1', monthly(10))))?.exceeded).toBe(true);
    await clock.advance(1250);
    expect(syncStatus(first.check(key('key_1', monthly(10))))?.exceeded).toBe(true);
    // Refreshes read the cache, never the ledger, between reconciliations.
    expect(ledger.calls).toEqual([]);
  });

  it('bounds the overshoot: a process keeps admitting only until the other’s spend reaches it', async () => {
    const { clock, first, second } = await twoProcesses();
    let admittedAfterCrossing = 0;
    let spent = 0;
    // Both processes spend $0.10 every 50 ms each, alternating, until both refuse.
    for (let tick = 0; tick < 400; tick++) {
      for (const tracker of [first, second]) {
        if (!syncStatus(tracker.check(key('key_1', monthly(10))))?.exceeded) {
          tracker.record('key_1', 0.1);
          spent += 0.1;
          if (spent > 10 + 1e-9) admittedAfterCrossing += 1;
        }
      }
      await clock.advance(50);
    }
    // Over budget by at most the other process's spend during push + refresh: 1.25 s / 50 ms = 25 requests of $0.10.
    expect(spent).toBeGreaterThanOrEqual(10);
    expect(admittedAfterCrossing).toBeLessThanOrEqual(26);
    expect(spent).toBeLessThanOrEqual(10 + 2.6);
  });

  it('reconciles a counter the cache lost from the ledger, never lowering one that is ahead', async () => {
    const { clock, cache, ledger, first, second } = await twoProcesses();
    first.record('key_1', 3);
    ledger.rows.push({ keyId: 'key_1', startedAt: start, costUsd: 3 });
    await clock.advance(1250);
    expect(await spentBy(second, clock)).toBe(3);
    // The cache loses every counter, and the first process dies (its slot is never rewritten).
    for (const slot of ['0', '1', 'base']) await cache.delete(`torii:spend:key_1:2025-06-01:${slot}`);
    await first.close();
    await clock.advance(1000);
    expect(await spentBy(second, clock)).toBe(0);
    await clock.advance(60_000);
    expect(await spentBy(second, clock)).toBe(3);
    // The ledger lags behind the counters (events still queued): reconciliation leaves the counter alone.
    second.record('key_1', 2);
    await clock.advance(60_000);
    expect(await spentBy(second, clock)).toBe(5);
    await second.close();
  });

  it('lets a third process load the shared total without reading the ledger', async () => {
    const { clock, first, ledger, process } = await twoProcesses();
    first.record('key_1', 7);
    await clock.advance(250);
    ledger.calls.length = 0;
    const third = process({ processId: 'process-c' });
    expect((await third.check(key('key_1', monthly(10))))?.spentUsd).toBe(7);
    expect(ledger.calls).toEqual([]);
  });

  it('refreshes 2,000 keys in a dozen getMany calls, not a read per key', async () => {
    const world = createWorld();
    const calls = { get: 0, getMany: 0, keysPerGetMany: [] as number[] };
    const counting: KeyValueCache = {
      ...world.cache,
      get: (name) => ((calls.get += 1), world.cache.get(name)),
      getMany: (names) => {
        calls.getMany += 1;
        calls.keysPerGetMany.push(names.length);
        return world.cache.getMany!(names);
      },
    };
    const keys = Array.from({ length: 2000 }, (_, index) => key(`key_${index}`, monthly(10)));
    const first = world.process({ processId: 'process-a', cache: counting });
    const second = world.process({ processId: 'process-b', cache: counting });
    for (const each of keys) {
      await first.check(each);
      await second.check(each);
    }
    for (const [index, each] of keys.entries()) first.record(each.id, index / 1000);
    await world.clock.advance(250);
    await world.clock.settle();
    calls.get = 0;
    calls.getMany = 0;
    calls.keysPerGetMany.length = 0;
    // Three more pushes (nothing pending) and one refresh of 2,000 keys in each process.
    await world.clock.advance(1000);
    await world.clock.settle();
    expect(keys.map((each) => syncStatus(second.check(each))?.spentUsd)).toEqual(
      keys.map((_each, index) => index / 1000),
    );
    // 2 processes x 2,000 keys x (base + slots 0, 1) / 500 keys per call.
    expect(calls).toEqual({ get: 0, getMany: 24, keysPerGetMany: Array.from({ length: 24 }, () => 500) });
    await first.close();
    await second.close();
  });
});
