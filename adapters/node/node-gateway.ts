import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Hono } from 'hono';
import { builtinProviders } from '../../providers/index.ts';
import { createKeyAdministration } from '../../src/auth/key-administration.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { createVirtualKeyAuthenticator } from '../../src/auth/virtual-key-authenticator.ts';
import { createMemoryKeyValueCache } from '../../src/cache/memory-key-value-cache.ts';
import { createBudgetTracker } from '../../src/limits/budget-tracker.ts';
import { createRateLimiter } from '../../src/limits/rate-limiter.ts';
import type { BudgetGate } from '../../src/routes/request-accounting.ts';
import { createGateway } from '../../src/gateway.ts';
import type { GatewayEnvironment } from '../../src/routes/gateway-context.ts';
import { consoleLogger, type GatewayLogger, type GatewayServices } from '../../src/services.ts';
import { loadGatewayConfig } from '../shared/load-gateway-config.ts';
import type { NodeDataPlane } from './node-data-plane.ts';
import { createPrometheusMetrics, type PrometheusMetrics } from './prometheus-metrics.ts';
import { createUndiciUpstreamFetch } from './undici-upstream-fetch.ts';

/** A gateway wired for Node: undici upstream pool, prom-client metrics, config from TORII_CONFIG or defaults. */
export interface NodeGateway {
  app: Hono<GatewayEnvironment>;
  metrics: PrometheusMetrics;
  configSource: string;
  modelGroups: string[];
}

/** Extra wiring a Node process passes in (how /metrics is served, readiness). */
export interface NodeGatewayOptions {
  masterKey: string;
  /** The process's metrics; created here when omitted. */
  metrics?: PrometheusMetrics;
  metricsExposition?: GatewayServices['metricsExposition'];
  isReady?: () => boolean;
  /**
   * Keys, limits and usage (see node-data-plane.ts). Without it the gateway accepts the master key only and keeps
   * no ledger (the cluster primary's config check uses it that way).
   */
  dataPlane?: NodeDataPlane;
}

/** Budgets over the plane's shared cache (Redis, or the primary's), reconciled from the ledger. */
function budgetGate(plane: NodeDataPlane, logger: GatewayLogger): BudgetGate {
  const tracker = createBudgetTracker({
    cache: plane.sharedCache ?? createMemoryKeyValueCache({ maxEntries: 100_000 }),
    reconcile: (keyIds, since) => plane.usageQuery.spendByKey(keyIds, since),
    logger,
  });
  plane.onClose(() => tracker.close());
  return { check: (key) => tracker.enforce(key), record: (key, costUsd) => tracker.record(key.id, costUsd) };
}

/**
 * Builds the gateway for one Node process from its environment.
 *
 * @example
 * const { app } = await createNodeGateway(process.env, { masterKey: process.env.TORII_MASTER_KEY! });
 */
export async function createNodeGateway(
  environment: NodeJS.ProcessEnv,
  options: NodeGatewayOptions,
): Promise<NodeGateway> {
  const { config, source } = await loadGatewayConfig(environment, builtinProviders, (path) => readFile(path, 'utf8'));
  const metrics = options.metrics ?? createPrometheusMetrics();
  // One-shot, synchronous hashing: no Hash object and no trip through the thread pool that Web Crypto takes.
  const sha256 = (text: string) => hash('sha256', text, 'buffer');
  const plane = options.dataPlane;
  const logger = consoleLogger;
  const virtualKeys =
    plane === undefined
      ? undefined
      : createVirtualKeyAuthenticator({
          masterKey: options.masterKey,
          store: plane.keyStore,
          ...(plane.sharedCache === undefined ? {} : { sharedCache: plane.sharedCache }),
          invalidations: plane.invalidations,
          sha256,
          onLookupProblem: (problem, error) => logger.warn(problem, { error: String(error) }),
        });
  if (virtualKeys !== undefined) plane?.onInvalidationGap(() => virtualKeys.forgetAll());
  const authenticator = virtualKeys ?? createMasterKeyAuthenticator(options.masterKey, { sha256 });
  const app = createGateway({
    config,
    providers: builtinProviders,
    authenticator,
    ...(plane === undefined
      ? {}
      : {
          administration: {
            keys: createKeyAdministration({
              store: plane.keyStore,
              ...(plane.sharedCache === undefined ? {} : { sharedCache: plane.sharedCache }),
              invalidations: plane.invalidations,
              sha256,
            }),
            usage: plane.usageQuery,
          },
          accounting: {
            rateLimiter: createRateLimiter({
              mode: plane.rateLimitMode,
              ...(plane.limitStore === undefined || plane.rateLimitMode === 'local' ? {} : { store: plane.limitStore }),
              onStoreError: (error, counter) =>
                logger.warn('rate limit store failed', { counter, error: String(error) }),
            }),
            budgets: budgetGate(plane, logger),
            recordUsage: (event) => plane.usageQueue.enqueue(event),
          },
        }),
    services: {
      upstreamFetch: createUndiciUpstreamFetch(),
      metrics,
      metricsExposition:
        options.metricsExposition ??
        (async () => ({ contentType: metrics.registry.contentType, body: await metrics.registry.metrics() })),
      ...(options.isReady ? { isReady: options.isReady } : {}),
    },
  });
  return { app, metrics, configSource: source, modelGroups: Object.keys(config.modelGroups) };
}
