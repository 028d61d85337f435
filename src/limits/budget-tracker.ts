import type { KeyBudget } from '../auth/virtual-key-record.ts';
import { consoleLogger } from '../services.ts';
import { platformTimers } from '../usage/usage-queue-timers.ts';
import { budgetExceededError } from './budget-error.ts';
import { budgetCounterTtlSeconds, budgetPeriodWindow, type BudgetPeriodWindow } from './budget-period.ts';
import { createCacheSpendCounters, type SpendCounterId } from './budget-spend-counters.ts';
import type { BudgetedKey, BudgetStatus, BudgetTracker, BudgetTrackerOptions } from './budget-tracker-types.ts';

export type {
  BudgetedKey,
  BudgetStatus,
  BudgetTracker,
  BudgetTrackerOptions,
  SpendReconciler,
} from './budget-tracker-types.ts';

/** What the tracker keeps per key. */
interface KeySpend {
  keyId: string;
  budget: KeyBudget;
  window: BudgetPeriodWindow;
  counter: SpendCounterId;
  /** The shared total as last read (every process's pushed spend, this one's included). */
  shared: number;
  /** What this process pushed since that read. */
  pushedSinceRefresh: number;
  /** What this process recorded and has not pushed yet. */
  pending: number;
  needsReconcile: boolean;
  lastCheckedAt: number;
}

/** Most keys per reconcile call, so one ledger query never names an unbounded list. */
const reconcileChunk = 1000;
/** Most counters per `readMany` call of a refresh. */
const refreshChunk = 2000;

/**
 * Spend budgets per virtual key, checked on the request path from memory alone.
 *
 * Each process keeps, per key in use, the spend in the key's current period (a UTC calendar day, ISO week or month, or
 * `total`) as `shared + pushed + pending`: its own spend counts at once; it pushes its spend to shared counters in the
 * cache every `pushIntervalMs` (250 ms), reads every process's total back every `refreshIntervalMs` (1 s), and
 * reconciles with the ledger every `reconcileIntervalMs` (60 s) through the injected `reconcile` function, raising a
 * counter that fell behind (lost from the cache, or a process died before pushing) and never lowering one. So counters
 * are never summed per request and cannot drift for longer than one reconciliation (plus the usage queue's delay
 * before the ledger has an event).
 *
 * **Overshoot bound.** A request is admitted while `spent < budget` and its cost is known only when it ends, so a
 * budget can be overshot by (a) the cost of the key's requests in flight when it is crossed, plus (b) what other
 * processes spend on the key during one push plus one refresh (about `pushIntervalMs + refreshIntervalMs` = 1.25 s by
 * default, plus the cache's latency). A counter lost from the cache can add (c) the spend during one
 * `reconcileIntervalMs` until the ledger restores it. Reconciliation can over-count by the spend recorded in the
 * instant between a push and a ledger read, once per lost counter.
 *
 * **Cost.** A refresh reads every key in use through `readMany` when the counters have it, in chunks of 2,000 keys:
 * with the cache-slot counters, about `N * (P + 2) / 500` cache calls for N keys written by P processes (a `getMany`
 * of up to 500 keys each), instead of `P + 2` calls per key.
 *
 * Shared-counter layout and its failure modes: see {@link createCacheSpendCounters}. When the cache or ledger fails,
 * the tracker enforces from what it knows (fail open for spend it cannot see), logs, and retries in the next sync.
 *
 * @example
 * ```ts
 * const budgets = createBudgetTracker({ cache, reconcile: (keyIds, since) => usageQuery.spendByKey(keyIds, since) });
 * const pending = budgets.enforce(keyRecord); // throws a 429 when the budget is spent
 * if (pending) await pending; // only the first time this process sees the key
 * // ... serve the request, then:
 * budgets.record(keyRecord.id, costUsd);
 * ```
 */
export function createBudgetTracker(options: BudgetTrackerOptions): BudgetTracker {
  const now = options.now ?? Date.now;
  const timers = options.timers ?? platformTimers;
  const logger = options.logger ?? consoleLogger;
  const counters =
    options.counters ??
    createCacheSpendCounters({ cache: options.cache, processId: options.processId ?? crypto.randomUUID() });
  const pushIntervalMs = options.pushIntervalMs ?? 250;
  const refreshIntervalMs = options.refreshIntervalMs ?? 1000;
  const reconcileIntervalMs = options.reconcileIntervalMs ?? 60_000;
  const idleAfterMs = options.idleAfterMs ?? 600_000;
  const maxKeys = options.maxKeys ?? 100_000;

  /** Keys in use, least recently checked first. */
  const states = new Map<string, KeySpend>();
  /**
   * The key set in `states` last, which is at its recent end: checking it again needs no move. A move is a delete and
   * a set, and a Map's delete may reallocate its table, in the old generation once the Map is old: at one key's
   * request rate that was a few hundred bytes of old-generation garbage per request.
   */
  let mostRecentKeyId: string | undefined;
  const putMostRecent = (keyId: string, state: KeySpend): void => {
    if (keyId !== mostRecentKeyId) states.delete(keyId);
    states.set(keyId, state);
    mostRecentKeyId = keyId;
  };
  const loading = new Map<string, Promise<KeySpend>>();
  /** Pushes to counters of ended periods, awaited by `close`. */
  const background = new Set<Promise<void>>();
  let lastRefreshAt = now();
  let lastReconcileAt = now();
  let syncing: Promise<void> | undefined;
  let closed = false;
  let timer: unknown;

  const counterFor = (keyId: string, window: BudgetPeriodWindow, at: number): SpendCounterId => ({
    keyId,
    periodLabel: window.label,
    ttlSeconds: budgetCounterTtlSeconds(window, at),
  });

  const statusOf = (state: KeySpend): BudgetStatus => {
    const spentUsd = state.shared + state.pushedSinceRefresh + state.pending;
    return {
      keyId: state.keyId,
      budget: state.budget,
      window: state.window,
      spentUsd,
      exceeded: spentUsd >= state.budget.amountUsd,
    };
  };

  /** Pushes what a state still holds to its counter in the background, and drops the process's slot memory. */
  function retire(state: KeySpend): void {
    const { counter, pending } = state;
    state.pending = 0;
    if (pending <= 0) {
      counters.forget(counter);
      return;
    }
    const push = counters
      .add(counter, pending)
      .catch((error: unknown) => warn('could not push the spend of an ended budget period', error))
      .finally(() => {
        counters.forget(counter);
        background.delete(push);
      });
    background.add(push);
  }

  /** Moves a state whose period ended to the current one, starting from zero. */
  function rollOverIfEnded(state: KeySpend, at: number): void {
    if (state.window.end === null || at < state.window.end) return;
    retire(state);
    state.window = budgetPeriodWindow(state.budget.period, at);
    state.counter = counterFor(state.keyId, state.window, at);
    state.shared = 0;
    state.pushedSinceRefresh = 0;
    state.needsReconcile = true;
  }

  async function load(key: BudgetedKey & { budget: KeyBudget }, at: number): Promise<KeySpend> {
    const window = budgetPeriodWindow(key.budget.period, at);
    const counter = counterFor(key.id, window, at);
    let shared = 0;
    let needsReconcile = true;
    try {
      shared = await counters.read(counter);
      if (shared === 0) {
        // Nothing shared yet (a new period, a key new to every process, or a cache that lost it): ask the ledger now.
        const ledger = (await options.reconcile([key.id], window.start)).get(key.id) ?? 0;
        shared = await counters.raiseTo(counter, ledger);
        needsReconcile = false;
      }
    } catch (error) {
      warn('could not load a key’s spend; enforcing from this process’s spend until the next sync', error);
    }
    const state: KeySpend = {
      keyId: key.id,
      budget: key.budget,
      window,
      counter,
      shared,
      pushedSinceRefresh: 0,
      pending: 0,
      needsReconcile,
      lastCheckedAt: now(),
    };
    putMostRecent(key.id, state);
    return state;
  }

  function check(key: BudgetedKey): BudgetStatus | undefined | Promise<BudgetStatus | undefined> {
    const budget = key.budget;
    if (budget === null) return undefined;
    const at = now();
    const state = states.get(key.id);
    if (state !== undefined && state.budget.period === budget.period) {
      rollOverIfEnded(state, at);
      state.budget = budget;
      state.lastCheckedAt = at;
      if (key.id !== mostRecentKeyId) putMostRecent(key.id, state);
      return statusOf(state);
    }
    if (state !== undefined) {
      // The budget's period changed: start over from the shared counters of the new period.
      retire(state);
      states.delete(key.id);
    }
    let loaded = loading.get(key.id);
    if (loaded === undefined) {
      loaded = load({ ...key, budget }, at).finally(() => loading.delete(key.id));
      loading.set(key.id, loaded);
    }
    return loaded.then((loadedState) => {
      loadedState.budget = budget;
      return statusOf(loadedState);
    });
  }

  function warn(message: string, error: unknown, fields: Record<string, unknown> = {}): void {
    logger.warn(`budgets: ${message}`, { ...fields, error: error instanceof Error ? error.message : String(error) });
  }

  async function push(): Promise<void> {
    let failures = 0;
    let lastError: unknown;
    await Promise.all(
      [...states.values()]
        .filter((state) => state.pending > 0)
        .map(async (state) => {
          const { counter, pending } = state;
          state.pending = 0;
          try {
            await counters.add(counter, pending);
            if (state.counter === counter) state.pushedSinceRefresh += pending;
          } catch (error) {
            failures += 1;
            lastError = error;
            if (state.counter === counter) state.pending += pending;
          }
        }),
    );
    if (failures > 0) warn('could not push spend to the shared counters; retrying', lastError, { keys: failures });
  }

  async function refresh(): Promise<void> {
    let failures = 0;
    let lastError: unknown;
    const apply = (state: KeySpend, counter: SpendCounterId, total: number) => {
      if (state.counter !== counter) return;
      state.shared = total;
      state.pushedSinceRefresh = 0;
    };
    const all = [...states.values()];
    const readMany = counters.readMany?.bind(counters);
    if (readMany !== undefined) {
      // A chunk at a time, so one failed cache call leaves the other chunks' totals fresh.
      for (let first = 0; first < all.length; first += refreshChunk) {
        const chunk = all.slice(first, first + refreshChunk);
        const chunkCounters = chunk.map((state) => state.counter);
        try {
          const totals = await readMany(chunkCounters);
          chunk.forEach((state, index) => apply(state, chunkCounters[index]!, totals[index]!));
        } catch (error) {
          failures += chunk.length;
          lastError = error;
        }
      }
    } else {
      await Promise.all(
        all.map(async (state) => {
          const counter = state.counter;
          try {
            apply(state, counter, await counters.read(counter));
          } catch (error) {
            failures += 1;
            lastError = error;
          }
        }),
      );
    }
    if (failures > 0) warn('could not read the shared spend counters', lastError, { keys: failures });
  }

  async function reconcileWithLedger(due: KeySpend[]): Promise<void> {
    const byStart = new Map<number, KeySpend[]>();
    for (const state of due) {
      const group = byStart.get(state.window.start) ?? [];
      group.push(state);
      byStart.set(state.window.start, group);
    }
    for (const [since, group] of byStart) {
      for (let first = 0; first < group.length; first += reconcileChunk) {
        const chunk = group.slice(first, first + reconcileChunk);
        try {
          const ledger = await options.reconcile(
            chunk.map((state) => state.keyId),
            since,
          );
          await Promise.all(
            chunk.map(async (state) => {
              const counter = state.counter;
              const total = await counters.raiseTo(counter, ledger.get(state.keyId) ?? 0);
              if (state.counter === counter) {
                state.shared = total;
                state.pushedSinceRefresh = 0;
                state.needsReconcile = false;
              }
            }),
          );
        } catch (error) {
          warn('could not reconcile spend with the ledger; retrying', error, { keys: chunk.length });
        }
      }
    }
  }

  function evictIdle(at: number): void {
    for (const state of states.values()) {
      const idle = at - state.lastCheckedAt > idleAfterMs;
      if (!idle && states.size <= maxKeys) break;
      if (state.pending > 0) continue;
      retire(state);
      states.delete(state.keyId);
    }
  }

  async function runSync(): Promise<void> {
    const at = now();
    for (const state of states.values()) rollOverIfEnded(state, at);
    await push();
    if (at - lastReconcileAt >= reconcileIntervalMs) {
      lastReconcileAt = at;
      lastRefreshAt = at;
      await reconcileWithLedger([...states.values()]);
    } else {
      if (at - lastRefreshAt >= refreshIntervalMs) {
        lastRefreshAt = at;
        await refresh();
      }
      const due = [...states.values()].filter((state) => state.needsReconcile);
      if (due.length > 0) await reconcileWithLedger(due);
    }
    evictIdle(at);
  }

  function sync(): Promise<void> {
    syncing ??= runSync()
      .catch((error: unknown) => warn('sync failed', error))
      .finally(() => {
        syncing = undefined;
      });
    return syncing;
  }

  function schedule(): void {
    if (closed) return;
    timer = timers.setTimeout(() => {
      timer = undefined;
      void sync().finally(schedule);
    }, pushIntervalMs);
  }
  schedule();

  return {
    check,
    enforce(key) {
      const status = check(key);
      if (status instanceof Promise) {
        return status.then((loaded) => {
          if (loaded?.exceeded === true) throw budgetExceededError(loaded.budget, loaded.spentUsd, loaded.window);
        });
      }
      if (status?.exceeded === true) throw budgetExceededError(status.budget, status.spentUsd, status.window);
    },
    record(keyId, costUsd) {
      if (!(costUsd > 0) || !Number.isFinite(costUsd)) return;
      const state = states.get(keyId);
      // A key never checked here has no budget (or was forgotten while idle): the ledger counts its spend.
      if (state === undefined) return;
      rollOverIfEnded(state, now());
      state.pending += costUsd;
    },
    sync,
    async close() {
      closed = true;
      if (timer !== undefined) timers.clearTimeout(timer);
      await syncing;
      await push();
      await Promise.all([...background]);
    },
  };
}
