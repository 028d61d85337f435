import { assembleAccounting, type AssembledAccounting } from '../../src/accounting/accounting-assembly.ts';
import { createLocalKeyInvalidationBus } from '../../src/auth/local-key-invalidation-bus.ts';
import { createMemoryKeyValueCache } from '../../src/cache/memory-key-value-cache.ts';
import { createCacheSpendCounters } from '../../src/limits/budget-spend-counters.ts';
import type { GatewayAccounting } from '../../src/accounting/gateway-accounting.ts';
import type { ResponseStore } from '../../src/responses/response-store.ts';
import type { GatewayLogger } from '../../src/services.ts';
import { createDurableObjectLimitStore } from './durable-object-limit-store.ts';
import { createDurableObjectSpendCounters } from './durable-object-spend-counters.ts';
import { consumeUsageBatch, type WorkersQueueBatch } from './queue-usage-consumer.ts';
import { createQueueUsageSink } from './queue-usage-sink.ts';
import { createBudgetSyncDriver, requestDrivenTimers } from './worker-budget-sync.ts';
import { createWorkerDatabase } from './worker-database.ts';
import {
  createWorkerKeyStore,
  createWorkerResponseStore,
  createWorkerUsageQuery,
  createWorkerUsageSink,
} from './worker-database-stores.ts';
import type { WorkerAccountingSettings, WorkerEnvironment } from './worker-environment.ts';
import { keptAliveKeyValueCache, keptAliveLimitStore } from './worker-kept-alive.ts';
import { bundledMigrations } from './worker-migrations-bundled.ts';
import { keepAlive, runInInvocation, type WorkerExecutionContext } from './worker-request-scope.ts';
import { createWorkerUsageBatcher } from './worker-usage-batcher.ts';
import { createWorkersKvKeyValueCache } from './workers-kv-key-value-cache.ts';

/** Keys, limits, budgets and the ledger of one Worker isolate, ready for `createGateway`. */
export interface WorkerAccounting {
  authenticator: AssembledAccounting['authenticator'];
  accounting: GatewayAccounting;
  administration: AssembledAccounting['administration'];
  /** The Responses API's stored responses, in the same Postgres (for `createGateway`'s `responses`). */
  responseStore: ResponseStore;
  /**
   * Serves one request inside its invocation (worker-request-scope.ts), so background work it starts is kept alive by
   * its `waitUntil`; also asks for a budget sync, which keeps this isolate's budget totals fresh.
   */
  handle<Result>(context: WorkerExecutionContext, serve: () => Result): Result;
  /** The `queue()` handler's work: writes a batch of usage messages to the ledger. */
  consumeUsage(batch: WorkersQueueBatch, context: WorkerExecutionContext): Promise<void>;
}

/** Prefix of the key cache's entries in the KV namespace, so the namespace can hold other data too. */
const kvPrefix = 'torii:';

/**
 * Opens the accounting of a Worker isolate from its bindings (loaded with a dynamic import by worker-gateway.ts, so a
 * Worker without a database never evaluates Drizzle or postgres-js):
 *
 * - **Keys**: the Drizzle key store on Postgres (Hyperdrive or `DATABASE_URL`, one connection per use), the KV
 *   namespace `TORII_CACHE` as the shared tier, and an invalidation bus within the isolate (admin changes made here
 *   apply here at once). There is no bus between isolates: another isolate trusts its copy for `localKeyTtlMs`
 *   (5 s), then reads KV, which other locations may serve stale for up to ~60 s.
 * - **Limits**: the `ToriiKeyCounters` Durable Object, `leased` by default (`strict` and `local` by
 *   `TORII_RATE_LIMIT_MODE`); every store call is kept alive by the invocation that made it.
 * - **Budgets**: spend counters in the same Durable Object (one atomic add per push), the tracker's loop driven by
 *   requests (worker-budget-sync.ts).
 * - **Ledger**: usage events batched per isolate (worker-usage-batcher.ts) and sent to the Queue `TORII_USAGE_QUEUE`,
 *   whose consumer ({@link WorkerAccounting.consumeUsage}) writes them to Postgres.
 * - **Stored responses** (the Responses API): the Drizzle response store on the same Postgres, a connection per call.
 *
 * Missing optional bindings degrade, each with a warning at start: no KV, every isolate's miss goes to Postgres; no
 * Durable Object, limits and budgets count per isolate (budgets corrected from the ledger every 60 s); no Queue, the
 * usage batches go straight to Postgres inside `waitUntil`.
 *
 * @example
 * ```ts
 * const accounting = openWorkerAccounting(env, readWorkerAccountingSettings(env)!, masterKey, consoleLogger);
 * const { authenticator, administration } = accounting;
 * const app = createGateway({ config, providers, authenticator, accounting: accounting.accounting, administration });
 * ```
 */
export function openWorkerAccounting(
  environment: WorkerEnvironment,
  settings: WorkerAccountingSettings,
  masterKey: string,
  logger: GatewayLogger,
): WorkerAccounting {
  const database = createWorkerDatabase(settings.connectionString, {
    migrations: bundledMigrations,
    keepAlive,
    logger,
  });
  const kv = environment.TORII_CACHE;
  const counters = environment.TORII_KEY_COUNTERS;
  const queue = environment.TORII_USAGE_QUEUE;
  if (kv === undefined) logger.warn('no TORII_CACHE KV binding: key lookups that miss an isolate go to Postgres');
  if (counters === undefined)
    logger.warn('no TORII_KEY_COUNTERS Durable Object binding: rate limits and budgets count per isolate');
  if (queue === undefined)
    logger.warn('no TORII_USAGE_QUEUE Queue binding: usage is written to Postgres directly, within waitUntil');

  const ledger = createWorkerUsageSink(database);
  const batcher = createWorkerUsageBatcher({
    sink: queue === undefined ? ledger : createQueueUsageSink(queue),
    keepAlive,
    logger,
  });
  const assembled = assembleAccounting({
    masterKey,
    keyStore: createWorkerKeyStore(database),
    ...(kv === undefined
      ? {}
      : { sharedCache: keptAliveKeyValueCache(createWorkersKvKeyValueCache(kv, { prefix: kvPrefix })) }),
    invalidations: createLocalKeyInvalidationBus(),
    ...(counters === undefined || settings.rateLimitMode === 'local'
      ? {}
      : { limitStore: keptAliveLimitStore(createDurableObjectLimitStore(counters)) }),
    rateLimitMode: settings.rateLimitMode,
    usageQuery: createWorkerUsageQuery(database),
    recordUsage: (event) => batcher.record(event),
    // Never the KV namespace: KV takes one write per second per key, and a push is one write every 250 ms.
    budgetCounters:
      counters === undefined
        ? createCacheSpendCounters({
            cache: createMemoryKeyValueCache({ maxEntries: 100_000 }),
            processId: crypto.randomUUID(),
          })
        : createDurableObjectSpendCounters(counters),
    budgetTimers: requestDrivenTimers,
    localKeyTtlMs: settings.localKeyTtlMs,
    logger,
  });
  const budgetSync = createBudgetSyncDriver({ sync: () => assembled.budgets.sync() });
  const budgets = assembled.accounting.budgets;
  return {
    authenticator: assembled.authenticator,
    administration: assembled.administration,
    responseStore: createWorkerResponseStore(database),
    accounting: {
      ...assembled.accounting,
      ...(budgets === undefined
        ? {}
        : {
            budgets: {
              check: (key) => budgets.check(key),
              record(key, costUsd) {
                budgets.record(key, costUsd);
                keepAlive(budgetSync.request());
              },
            },
          }),
    },
    handle(context, serve) {
      return runInInvocation(context, () => {
        keepAlive(budgetSync.request());
        return serve();
      });
    },
    async consumeUsage(batch, context) {
      await runInInvocation(context, () => consumeUsageBatch(batch, ledger, logger));
    },
  };
}
