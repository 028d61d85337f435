import { createKeyAdministration, type KeyAdministration } from '../auth/key-administration.ts';
import type { KeyInvalidationBus } from '../auth/key-invalidation.ts';
import type { KeyStore } from '../auth/key-store.ts';
import type { KeyStoreLookupLimits } from '../auth/key-store-lookup-batcher.ts';
import { createVirtualKeyAuthenticator, type VirtualKeyAuthenticator } from '../auth/virtual-key-authenticator.ts';
import type { KeyValueCache } from '../cache/key-value-cache.ts';
import { createMemoryKeyValueCache } from '../cache/memory-key-value-cache.ts';
import type { BudgetSpendCounters } from '../limits/budget-spend-counters.ts';
import { createBudgetTracker, type BudgetTracker } from '../limits/budget-tracker.ts';
import type { LimitStore } from '../limits/limit-store.ts';
import { createRateLimiter, type RateLimiter, type RateLimitMode } from '../limits/rate-limiter.ts';
import type { GatewayAccounting } from './gateway-accounting.ts';
import { consoleLogger, type GatewayLogger } from '../services.ts';
import type { UsageEvent } from '../usage/usage-event.ts';
import type { UsageQuery } from '../usage/usage-query.ts';
import type { BackgroundTimers } from '../usage/usage-queue-timers.ts';

/**
 * What a runtime provides for keys, limits, budgets and the ledger. Each adapter opens these from its own services
 * (Node: Postgres or PGlite, Redis; Workers: Hyperdrive, KV, Durable Objects, a Queue; Deno: Postgres, Upstash) and
 * hands them to {@link assembleAccounting}, so every runtime enforces keys, limits and budgets with the same code.
 */
export interface AccountingParts {
  masterKey: string;
  /** The source of truth for keys (Postgres through Drizzle). */
  keyStore: KeyStore;
  /** Limits on store lookups of keys missing from the caches (default 4 in flight, 500 a batch, 10,000 waiting). */
  keyLookup?: KeyStoreLookupLimits;
  /** The shared tier of the key lookup and where budget counters live; without one, both are per process. */
  sharedCache?: KeyValueCache;
  /** Where key changes are announced; without one, the authenticator's local TTL bounds staleness. */
  invalidations?: KeyInvalidationBus;
  /** The shared rate-limit counters; without one, limits count per process. */
  limitStore?: LimitStore;
  /** Default: `leased` with a limit store, `local` without. */
  rateLimitMode?: RateLimitMode;
  /** The ledger's reader (admin usage queries and budget reconciliation). */
  usageQuery: UsageQuery;
  /** Takes one usage event per finished request, synchronously (an in-memory queue's enqueue). */
  recordUsage: (event: UsageEvent) => void;
  /** Budget spend counters with an atomic add (a Durable Object); default: slots in `sharedCache`. */
  budgetCounters?: BudgetSpendCounters;
  /** Timers of the budget tracker's background loop (default the platform's). */
  budgetTimers?: BackgroundTimers;
  /** SHA-256 of a string; defaults to Web Crypto (Node passes its synchronous hash). */
  sha256?: (text: string) => Uint8Array | Promise<Uint8Array>;
  /** SHA-256 of a string as lowercase hex, where the runtime has it natively (Node): the request path's hash. */
  sha256Hex?: (text: string) => string;
  /** How long a process trusts its local copy of a key, ms (default 30 s): the bound when no bus reaches it. */
  localKeyTtlMs?: number;
  logger?: GatewayLogger;
}

/** The assembled parts, ready for `createGateway`'s `authenticator`, `accounting` and `administration` options. */
export interface AssembledAccounting {
  authenticator: VirtualKeyAuthenticator;
  accounting: GatewayAccounting;
  administration: { keys: KeyAdministration; usage: UsageQuery };
  rateLimiter: RateLimiter;
  budgets: BudgetTracker;
  /** Stops the background loops after pushing pending spend and waiting for limit-store calls. */
  close(): Promise<void>;
}

/**
 * Builds the virtual-key authenticator, the admin API's parts, rate limits, budgets and the usage hook from a
 * runtime's {@link AccountingParts}.
 *
 * @example
 * ```ts
 * const { authenticator, accounting, administration } = assembleAccounting({
 *   masterKey, keyStore, usageQuery, recordUsage: (event) => queue.enqueue(event),
 * });
 * const app = createGateway({ config, providers, authenticator, accounting, administration });
 * ```
 */
export function assembleAccounting(parts: AccountingParts): AssembledAccounting {
  const logger = parts.logger ?? consoleLogger;
  const sha256 = parts.sha256;
  const authenticator = createVirtualKeyAuthenticator({
    masterKey: parts.masterKey,
    store: parts.keyStore,
    ...(parts.keyLookup === undefined ? {} : { storeLookup: parts.keyLookup }),
    ...(parts.sharedCache === undefined ? {} : { sharedCache: parts.sharedCache }),
    ...(parts.invalidations === undefined ? {} : { invalidations: parts.invalidations }),
    ...(sha256 === undefined ? {} : { sha256 }),
    ...(parts.sha256Hex === undefined ? {} : { sha256Hex: parts.sha256Hex }),
    ...(parts.localKeyTtlMs === undefined ? {} : { localTtlMs: parts.localKeyTtlMs }),
    onLookupProblem: (problem, error) => logger.warn(problem, { error: String(error) }),
  });
  const mode = parts.rateLimitMode ?? (parts.limitStore === undefined ? 'local' : 'leased');
  const rateLimiter = createRateLimiter({
    mode,
    ...(parts.limitStore === undefined || mode === 'local' ? {} : { store: parts.limitStore }),
    onStoreError: (error, counter) => logger.warn('rate limit store failed', { counter, error: String(error) }),
  });
  const budgets = createBudgetTracker({
    cache: parts.sharedCache ?? createMemoryKeyValueCache({ maxEntries: 100_000 }),
    reconcile: (keyIds, since) => parts.usageQuery.spendByKey(keyIds, since),
    ...(parts.budgetCounters === undefined ? {} : { counters: parts.budgetCounters }),
    ...(parts.budgetTimers === undefined ? {} : { timers: parts.budgetTimers }),
    logger,
  });
  const keys = createKeyAdministration({
    store: parts.keyStore,
    ...(parts.sharedCache === undefined ? {} : { sharedCache: parts.sharedCache }),
    ...(parts.invalidations === undefined ? {} : { invalidations: parts.invalidations }),
    ...(sha256 === undefined ? {} : { sha256 }),
  });
  return {
    authenticator,
    rateLimiter,
    budgets,
    administration: { keys, usage: parts.usageQuery },
    accounting: {
      rateLimiter,
      budgets: { check: (key) => budgets.enforce(key), record: (key, costUsd) => budgets.record(key.id, costUsd) },
      recordUsage: parts.recordUsage,
    },
    async close() {
      authenticator.close();
      await budgets.close();
      await rateLimiter.drain();
    },
  };
}
