import type { VirtualKeyRecord } from '../auth/virtual-key-record.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import type { UsageEvent } from '../usage/usage-event.ts';

/**
 * A key's spend budget as the request path sees it. `check` answers from memory (a Promise only the first time a
 * key is seen, while its spend loads) and throws the 429 `insufficient_quota` GatewayError when the key is over
 * budget; `record` adds a finished request's cost (in memory; shared counters are updated in the background).
 */
export interface BudgetGate {
  check(key: VirtualKeyRecord): void | Promise<void>;
  record(key: VirtualKeyRecord, costUsd: number): void;
}

/**
 * Limits, budgets and the ledger, as the gateway's request path uses them. Every part is optional: without them the
 * gateway serves the master key with no limits and keeps no ledger.
 */
export interface GatewayAccounting {
  rateLimiter?: RateLimiter;
  budgets?: BudgetGate;
  /** Takes one usage event per finished request; synchronous and non-blocking (an in-memory queue's enqueue). */
  recordUsage?: (event: UsageEvent) => void;
}
