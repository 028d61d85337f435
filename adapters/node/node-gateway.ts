import cluster from 'node:cluster';
import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Hono } from 'hono';
import { builtinProviders } from '../../providers/index.ts';
import { bundledPriceTable } from '../../src/usage/price-table.ts';
import { assembleAccounting } from '../../src/accounting/accounting-assembly.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { createGateway } from '../../src/gateway.ts';
import { runtimeSecrets } from '../shared/runtime-secrets.ts';
import type { GatewayEnvironment } from '../../src/gateway-environment.ts';
import { consoleLogger, type GatewayLogger, type GatewayServices } from '../../src/services.ts';
import { loadGatewayConfig } from '../shared/load-gateway-config.ts';
import { createGptTokenizerTokenCounter } from '../shared/gpt-tokenizer-token-counter.ts';
import type { NodeDataPlane } from './node-data-plane.ts';
import type { CircuitBus } from '../../src/routing/circuit-bus.ts';
import { createPrometheusMetrics, type PrometheusMetrics } from './prometheus-metrics.ts';
import { createUndiciUpstreamFetch } from './undici-upstream-fetch.ts';

/**
 * A gateway wired for Node: undici upstream pool, prom-client metrics, gpt-tokenizer for `count_tokens` to OpenAI
 * models (loaded on first use), config from TORII_CONFIG or defaults.
 */
export interface NodeGateway {
  app: Hono<GatewayEnvironment>;
  metrics: PrometheusMetrics;
  configSource: string;
  modelGroups: string[];
  /** What a LiteLLM config held that torii did not take (see load-gateway-config.ts); logged once at start. */
  configWarnings: string[];
}

/** Extra wiring a Node process passes in (how /metrics is served, readiness). */
export interface NodeGatewayOptions {
  masterKey: string;
  /** The process's metrics; created here when omitted. */
  metrics?: PrometheusMetrics;
  metricsExposition?: GatewayServices['metricsExposition'];
  isReady?: () => boolean;
  /** The process's logger (default: the console at `info`; server.ts passes the one at TORII_LOG_LEVEL). */
  logger?: GatewayLogger;
  /** Writes each request's access line (see node-logging.ts); absent: none. */
  accessLog?: GatewayServices['accessLog'];
  /** Exports each request's span (see trace-export-settings.ts); absent: none. */
  traces?: GatewayServices['traces'];
  /**
   * Keys, limits, usage and stored responses (see node-data-plane.ts). Without it the gateway accepts the master key
   * only, keeps no ledger and stores no responses (the cluster primary's config check uses it that way).
   */
  dataPlane?: NodeDataPlane;
  /** How circuit changes reach other processes when there is no data plane to carry them (a cluster without a database). */
  circuitBus?: CircuitBus;
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
  const { config, source, warnings } = await loadGatewayConfig(environment, builtinProviders, (path) =>
    readFile(path, 'utf8'),
  );
  // Without the process's own metrics: a gateway built here without them is a start-up probe (the config check).
  const metrics = options.metrics ?? createPrometheusMetrics({ processMetrics: false });
  const logger = options.logger ?? consoleLogger;
  // A LiteLLM config's parts torii did not take, once per start: by the process that starts (a cluster's primary or
  // the single process), not by every worker. Paths and reasons only, never values.
  if (warnings.length > 0 && !cluster.isWorker)
    logger.warn(`converted the LiteLLM config ${source}; ${warnings.length} part(s) not taken`, {
      notTaken: warnings,
    });
  // One-shot, synchronous hashing: no Hash object and no trip through the thread pool that Web Crypto takes.
  const sha256 = (text: string) => hash('sha256', text, 'buffer');
  const plane = options.dataPlane;
  const circuitBus = plane?.circuitBus ?? options.circuitBus;
  const assembled =
    plane === undefined
      ? undefined
      : assembleAccounting({
          masterKey: options.masterKey,
          keyStore: plane.keyStore,
          keyLookup: plane.keyLookup,
          ...(plane.sharedCache === undefined ? {} : { sharedCache: plane.sharedCache }),
          invalidations: plane.invalidations,
          ...(plane.limitStore === undefined ? {} : { limitStore: plane.limitStore }),
          rateLimitMode: plane.rateLimitMode,
          usageQuery: plane.usageQuery,
          recordUsage: (event) => plane.usageQueue.enqueue(event),
          sha256,
          sha256Hex: (text) => hash('sha256', text, 'hex'),
          logger,
        });
  if (plane !== undefined && assembled !== undefined) {
    plane.onInvalidationGap(() => assembled.authenticator.forgetAll());
    plane.onClose(() => assembled.close());
  }
  const app = createGateway({
    config,
    providers: builtinProviders,
    priceTable: bundledPriceTable,
    authenticator: assembled?.authenticator ?? createMasterKeyAuthenticator(options.masterKey),
    secrets: runtimeSecrets(environment, options.masterKey),
    ...(assembled === undefined ? {} : { administration: assembled.administration, accounting: assembled.accounting }),
    ...(plane === undefined ? {} : { responses: { store: plane.responseStore } }),
    routing: { backgroundHealthChecks: true, ...(circuitBus === undefined ? {} : { circuitBus }) },
    services: {
      upstreamFetch: createUndiciUpstreamFetch(),
      metrics,
      metricsExposition:
        options.metricsExposition ??
        (async () => ({ contentType: metrics.registry.contentType, body: await metrics.registry.metrics() })),
      ...(options.isReady ? { isReady: options.isReady } : {}),
      logger,
      ...(options.accessLog === undefined ? {} : { accessLog: options.accessLog }),
      ...(options.traces === undefined ? {} : { traces: options.traces }),
      tokenCounter: createGptTokenizerTokenCounter(),
    },
  });
  // Ready only once this process hears the circuit changes other processes publish (the gateway subscribed above):
  // a worker serving before Redis confirmed its SUBSCRIBE would keep sending to deployments every other process had
  // already cooled. Bounded: a Redis that does not confirm in time is logged, and serving goes on (delivery is at
  // most once anyway).
  await whenCircuitsHeard(circuitBus, logger);
  return {
    app,
    metrics,
    configSource: source,
    modelGroups: Object.keys(config.modelGroups),
    configWarnings: warnings,
  };
}

/** How long start-up waits for the circuit bus's subscription before serving without it. */
const circuitSubscriptionTimeoutMs = 5_000;

async function whenCircuitsHeard(bus: CircuitBus | undefined, logger: GatewayLogger): Promise<void> {
  const subscribed = bus?.whenSubscribed?.();
  if (subscribed === undefined) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), circuitSubscriptionTimeoutMs);
  });
  const outcome = await Promise.race([
    subscribed.then(
      () => 'subscribed' as const,
      () => 'failed' as const,
    ),
    timedOut,
  ]);
  clearTimeout(timer);
  if (outcome !== 'subscribed')
    logger.warn('serving before the circuit-change subscription was confirmed', { outcome });
}
