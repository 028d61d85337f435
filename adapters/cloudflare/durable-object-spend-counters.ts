import type { BudgetSpendCounters } from '../../src/limits/budget-spend-counters.ts';
import {
  keyCountersObjectFinder,
  keyCountersObjectNameOfKey,
  type KeyCountersNamespace,
  type KeyCountersOptions,
} from './durable-object-limit-store.ts';

/**
 * {@link BudgetSpendCounters} in the `ToriiKeyCounters` Durable Object of each key (the same object as its rate
 * limits, `key:<keyId>`): `add` is one atomic addition in the object, so every isolate adds to one total and no
 * per-process slots are needed (unlike the cache-backed counters). The totals are kept in the object's SQLite
 * storage, so they survive the object being evicted, restarted or moved; each expires `ttlSeconds` after its last
 * write, removed by the object's alarm.
 *
 * Cost: one RPC per call (the budget tracker pushes and reads in the background, never per request).
 *
 * @example
 * ```ts
 * const spendCounters = createDurableObjectSpendCounters(env.TORII_KEY_COUNTERS);
 * await spendCounters.add({ keyId: 'key_1', periodLabel: '2025-06-01', ttlSeconds: 3600 }, 0.25);
 * ```
 */
export function createDurableObjectSpendCounters(
  namespace: KeyCountersNamespace,
  options: KeyCountersOptions = {},
): BudgetSpendCounters {
  const objectFor = keyCountersObjectFinder(namespace, options);
  return {
    async add({ keyId, periodLabel, ttlSeconds }, amountUsd) {
      if (!(amountUsd > 0) || !Number.isFinite(amountUsd)) return;
      await objectFor(keyCountersObjectNameOfKey(keyId)).addSpend({ periodLabel, ttlSeconds }, amountUsd);
    },
    async read({ keyId, periodLabel }) {
      return await objectFor(keyCountersObjectNameOfKey(keyId)).readSpend({ periodLabel });
    },
    async raiseTo({ keyId, periodLabel, ttlSeconds }, ledgerUsd) {
      return await objectFor(keyCountersObjectNameOfKey(keyId)).raiseSpendTo({ periodLabel, ttlSeconds }, ledgerUsd);
    },
    forget() {
      // Nothing is kept in this process: the object holds the only copy.
    },
  };
}
