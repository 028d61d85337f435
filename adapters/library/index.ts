import { Hono } from 'hono';
import { builtinProviders } from '../../providers/index.ts';
import type { PriceTable } from '../../src/usage/price-model.ts';
import { bundledPriceTable } from '../../src/usage/price-table.ts';
import type { AssembledAccounting } from '../../src/accounting/accounting-assembly.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import type { Authenticator } from '../../src/auth/authenticator.ts';
import type { ProviderRegistry } from '../../src/canonical/provider-translator.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { createGateway as createCoreGateway, type GatewayOptions } from '../../src/gateway.ts';
import type { GatewayEnvironment } from '../../src/gateway-environment.ts';
import type { ResponseStore } from '../../src/responses/response-store.ts';
import type { GatewayServices } from '../../src/services.ts';

/** Options of the library's {@link createGateway}. */
export interface LibraryGatewayOptions {
  /** The master key clients present (`Authorization: Bearer ...`). Required unless `authenticator` or `accounting` is given. */
  masterKey?: string;
  /** A custom authenticator instead of the master key. */
  authenticator?: Authenticator;
  /** Values for `${NAME}` references in the config (e.g. `process.env`, or a Worker's `env`). */
  environment?: Record<string, string | undefined>;
  /** Providers; defaults to the built-in ones (OpenAI-compatible presets, Anthropic and the cloud providers). */
  providers?: ProviderRegistry;
  /** Model prices for the usage ledger and budgets; defaults to the bundled table (generated from a maintained catalogue). */
  priceTable?: PriceTable;
  /** Runtime services; defaults to the global fetch and no metrics. */
  services?: Partial<GatewayServices>;
  /**
   * Virtual keys, rate limits, budgets, the usage ledger and the admin API (`/admin/keys`, `/admin/usage`):
   * `openDatabaseAccounting` from `torii-gateway/accounting` (Postgres or PGlite), or {@link assembleAccounting} over parts of
   * your own. Its authenticator replaces the master-key one (the master key it was built with still works, and is
   * the only key the admin API takes). Without it the gateway accepts the master key only and keeps no ledger.
   */
  accounting?: LibraryAccounting;
  /**
   * Where the Responses API (`/v1/responses`) keeps responses, so `previous_response_id` and `GET /v1/responses/{id}`
   * work on every instance: a {@link ResponseStore} such as `createDrizzleResponseStore(db)` from
   * `torii-gateway/accounting`. Defaults to the store of `accounting` when it has one (`openDatabaseAccounting`'s
   * does); without either, no response is stored.
   */
  responses?: GatewayOptions['responses'];
  /**
   * Routing across processes and in the background: a `circuitBus` that carries circuit changes to your other
   * processes (for example `createPolledCircuitBus(createUpstashCircuitStore({ redis }), { logger })`, whose
   * `refreshIfDue()` you call per request or on a timer), and `backgroundHealthChecks: true` to run the config's health checks (a runtime whose timers outlive
   * requests: Node, Deno, Bun; not Cloudflare Workers).
   */
  routing?: GatewayOptions['routing'];
  /**
   * The path the gateway is served under when the host passes requests with their full path: a Next.js route
   * handler at `app/api/llm/[...path]/route.ts` (`'/api/llm'`), a Fastify route under a prefix. Not needed with
   * Hono's `app.route('/llm', gateway)` or Express's `app.use('/llm', ...)`, which strip the prefix themselves.
   * Every path under it that no route takes answers the client API's JSON 404.
   */
  basePath?: string;
}

/**
 * What the `accounting` option takes: an {@link assembleAccounting} result (the rest of it is ignored), and the
 * response store that `openDatabaseAccounting` adds, when there is one.
 */
export type LibraryAccounting = Pick<AssembledAccounting, 'authenticator' | 'accounting' | 'administration'> & {
  responseStore?: ResponseStore;
};

/**
 * torii as a library: a Hono app serving the OpenAI-compatible API, to serve from any Fetch-based runtime or mount
 * under a path of your own Hono app. The config is validated here (with `${ENV}` references resolved from
 * `options.environment`); an invalid one throws a ConfigError naming each field.
 *
 * @example
 * import { Hono } from 'hono';
 * import { createGateway } from 'torii-gateway';
 *
 * const app = new Hono();
 * app.route('/llm', createGateway(
 *   { modelGroups: { 'gpt-4o-mini': { deployments: [{ provider: 'openai', model: 'gpt-4o-mini', apiKey: '${OPENAI_API_KEY}' }] } } },
 *   { masterKey: process.env.TORII_MASTER_KEY, environment: process.env },
 * ));
 * // the openai SDK then uses baseURL 'http://host/llm/v1'
 *
 * @example
 * // With virtual keys, limits, budgets and the usage ledger in Postgres (see openDatabaseAccounting):
 * import { openDatabaseAccounting } from 'torii-gateway/accounting';
 *
 * const accounting = await openDatabaseAccounting({ masterKey, databaseUrl: process.env.DATABASE_URL });
 * app.route('/llm', createGateway(config, { accounting, environment: process.env }));
 * // POST /llm/admin/keys with the master key issues keys; on shutdown: await accounting.close();
 */
export function createGateway(config: unknown, options: LibraryGatewayOptions = {}): Hono<GatewayEnvironment> {
  const { accounting } = options;
  if (accounting !== undefined && options.authenticator !== undefined)
    throw new Error('createGateway takes an authenticator or accounting (which brings its own), not both.');
  const authenticator =
    accounting?.authenticator ??
    options.authenticator ??
    (options.masterKey !== undefined ? createMasterKeyAuthenticator(options.masterKey) : undefined);
  if (authenticator === undefined) throw new Error('createGateway needs a masterKey, an authenticator or accounting.');
  const responses =
    options.responses ?? (accounting?.responseStore === undefined ? undefined : { store: accounting.responseStore });
  const basePath = normalizeBasePath(options.basePath);
  const gateway = createCoreGateway({
    config: parseGatewayConfig(config, options.environment ?? {}),
    providers: options.providers ?? builtinProviders,
    priceTable: options.priceTable ?? bundledPriceTable,
    authenticator,
    ...(options.masterKey === undefined ? {} : { secrets: [options.masterKey] }),
    ...(options.services ? { services: options.services } : {}),
    ...(accounting === undefined
      ? {}
      : { accounting: accounting.accounting, administration: accounting.administration }),
    ...(responses === undefined ? {} : { responses }),
    ...(options.routing === undefined ? {} : { routing: options.routing }),
  });
  if (basePath === undefined) return gateway;
  // A base path of Hono's (the same router, every route under the prefix); the gateway's own catch-all answers
  // unknown paths under it.
  const host = new Hono<GatewayEnvironment>().basePath(basePath);
  host.route('/', gateway);
  return host;
}

/** `basePath` without a trailing slash; undefined for none (`''`, `'/'`); an error for one that is not a plain path. */
function normalizeBasePath(basePath: string | undefined): string | undefined {
  if (basePath === undefined) return undefined;
  const trimmed = basePath.replace(/\/+$/, '');
  if (trimmed === '') return undefined;
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(trimmed))
    throw new Error(
      `createGateway: basePath must be a plain path such as '/api/llm', got ${JSON.stringify(basePath)}.`,
    );
  return trimmed;
}

export { builtinProviders } from '../../providers/index.ts';
export { parseGatewayConfig } from '../../src/config/config-parse.ts';
export { gatewayDirectRoutes } from '../../src/gateway.ts';
export { ConfigError } from '../../src/config/config-error.ts';
export { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
export { GatewayError, isGatewayError } from '../../src/errors.ts';
export type { GatewayConfig, DeploymentConfig, ModelGroupConfig } from '../../src/config/config-schema.ts';
export type { CircuitBus, SharedCircuitChange } from '../../src/routing/circuit-bus.ts';
export {
  createPolledCircuitBus,
  defaultCircuitRefreshMs,
  type CircuitStore,
  type OpenCircuit,
  type PolledCircuitBus,
  type PolledCircuitBusOptions,
} from '../../src/routing/polled-circuit-bus.ts';
export type * from '../../src/canonical/index.ts';
export type {
  GatewayServices,
  GatewayMetrics,
  GatewayLogger,
  RequestObservation,
  UpstreamFetch,
  UpstreamRequestInit,
  UpstreamResponse,
} from '../../src/services.ts';
export {
  UpstreamLimitError,
  isUpstreamLimitError,
  type UpstreamLimit,
} from '../../src/upstream/upstream-limit-error.ts';
export { createFetchUpstream } from '../../src/upstream/fetch-upstream.ts';
export type { Authenticator, AuthContext } from '../../src/auth/authenticator.ts';
export {
  assembleAccounting,
  type AccountingParts,
  type AssembledAccounting,
} from '../../src/accounting/accounting-assembly.ts';
export { createMemoryKeyValueCache } from '../../src/cache/memory-key-value-cache.ts';
export { createMemoryLimitStore } from '../../src/limits/memory-limit-store.ts';
export { createLocalKeyInvalidationBus } from '../../src/auth/local-key-invalidation-bus.ts';
export { createUsageQueue, type UsageQueue, type UsageQueueOptions } from '../../src/usage/usage-queue.ts';
export type { KeyStore } from '../../src/auth/key-store.ts';
export type { KeyInvalidation, KeyInvalidationBus } from '../../src/auth/key-invalidation.ts';
export type { VirtualKeyRecord } from '../../src/auth/virtual-key-record.ts';
export type { KeyValueCache } from '../../src/cache/key-value-cache.ts';
export type { LimitStore, LimitLease } from '../../src/limits/limit-store.ts';
export type { RateLimitMode } from '../../src/limits/rate-limiter.ts';
export type { BudgetSpendCounters } from '../../src/limits/budget-spend-counters.ts';
export type { UsageEvent, UsageSink, UsageSpill } from '../../src/usage/usage-event.ts';
export type { UsageQuery } from '../../src/usage/usage-query.ts';
export type { GatewayAccounting } from '../../src/accounting/gateway-accounting.ts';
export {
  defaultResponseRetentionMs,
  type ResponseStore,
  type StoredResponse,
} from '../../src/responses/response-store.ts';
