import type { KeyBudget, VirtualKeyRecord } from '../auth/virtual-key-record.ts';
import type { KeyValueCache } from '../cache/key-value-cache.ts';
import type { GatewayLogger } from '../services.ts';
import type { BackgroundTimers } from '../usage/usage-queue-timers.ts';
import type { BudgetPeriodWindow } from './budget-period.ts';
import type { BudgetSpendCounters } from './budget-spend-counters.ts';

/**
 * The ledger's spend (US dollars) of each key over usage events started at or after `since` (epoch ms); every id
 * asked for is in the map. `UsageQuery.spendByKey` (src/usage/usage-query.ts) is one.
 */
export type SpendReconciler = (keyIds: readonly string[], since: number) => Promise<Map<string, number>>;

/** The part of a key record budgets read. */
export type BudgetedKey = Pick<VirtualKeyRecord, 'id' | 'budget'>;

/** A key's spend against its budget in the current period. */
export interface BudgetStatus {
  keyId: string;
  budget: KeyBudget;
  window: BudgetPeriodWindow;
  /** Spend in the period as this process knows it (its own at once, other processes' within the stated bound). */
  spentUsd: number;
  /** True once `spentUsd >= budget.amountUsd`: the next request is refused. */
  exceeded: boolean;
}

/** What {@link createBudgetTracker} is made with. */
export interface BudgetTrackerOptions {
  /** The shared cache the counters live in (Redis, Upstash, KV; memory when there is one process). */
  cache: KeyValueCache;
  /** Reads the ledger; called at a key's first load (when the cache has nothing) and every `reconcileIntervalMs`. */
  reconcile: SpendReconciler;
  /** Wall clock in epoch ms: periods are calendar periods (default `Date.now`). */
  now?: () => number;
  timers?: BackgroundTimers;
  logger?: GatewayLogger;
  /** Names this process's counter slots (default a random UUID). */
  processId?: string;
  /** Replaces the counters over `cache` (e.g. a store with an atomic increment). */
  counters?: BudgetSpendCounters;
  /** How often local spend is pushed to the shared counters, in ms (default 250). */
  pushIntervalMs?: number;
  /** How often the totals of keys in use are read back from the shared counters, in ms (default 1000). */
  refreshIntervalMs?: number;
  /** How often keys in use are reconciled with the ledger, in ms (default 60,000). */
  reconcileIntervalMs?: number;
  /** A key not checked for this long is forgotten (its pushes done first), in ms (default 600,000). */
  idleAfterMs?: number;
  /** Most keys tracked; the least recently checked idle ones are forgotten first (default 100,000). */
  maxKeys?: number;
}

/**
 * Per-key spend budgets, enforced from memory on the request path and kept in step across processes in the
 * background. See {@link createBudgetTracker}.
 */
export interface BudgetTracker {
  /**
   * The key's status, from memory. Only for a key this process has not seen (or whose budget period changed) is the
   * answer a Promise: one load from the shared cache (and the ledger when the cache has nothing). Undefined for a key
   * without a budget.
   */
  check(key: BudgetedKey): BudgetStatus | undefined | Promise<BudgetStatus | undefined>;
  /** {@link check}, throwing the 429 `budget_exceeded` {@link GatewayError} when the budget is spent. */
  enforce(key: BudgetedKey): void | Promise<void>;
  /** Adds a finished request's cost to its key's spend: in memory at once, to the shared counters within a push. */
  record(keyId: string, costUsd: number): void;
  /** Pushes, refreshes and (when due) reconciles now; what the background loop runs. */
  sync(): Promise<void>;
  /** Stops the background loop after pushing what is pending. */
  close(): Promise<void>;
}
