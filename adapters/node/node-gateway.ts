import cluster from 'node:cluster';
import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Hono } from 'hono';
import { assembleAccounting } from '../../src/accounting/accounting-assembly.ts';
import type { GatewayEnvironment } from '../../src/gateway-environment.ts';
import { consoleLogger, type GatewayLogger, type GatewayServices } from '../../src/services.ts';
import { createGptTokenizerTokenCounter } from '../shared/gpt-tokenizer-token-counter.ts';
import type { ProcessAccounting } from '../server-kit/process-accounting.ts';
import { createProcessGateway } from '../server-kit/process-gateway.ts';
import type { ProcessServices } from '../server-kit/start-gateway-process.ts';
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

/** One-shot, synchronous hashing: no Hash object and no trip through the thread pool that Web Crypto takes. */
const sha256 = (text: string) => hash('sha256', text, 'buffer');

/**
 * A Node data plane's keys, limits, budgets and ledger assembled for the gateway (the server kit's
 * {@link ProcessAccounting}): a Redis reconnect drops the local key copies, and closing pushes pending spend before
 * the plane flushes usage.
 *
 * @example
 * const accounting = nodeProcessAccounting(await openSingleProcessDataPlane(process.env, logger), masterKey, logger);
 */
export function nodeProcessAccounting(
  plane: NodeDataPlane,
  masterKey: string,
  logger: GatewayLogger,
  description: Record<string, unknown> = {},
): ProcessAccounting {
  const assembled = assembleAccounting({
    masterKey,
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
  plane.onInvalidationGap(() => assembled.authenticator.forgetAll());
  plane.onClose(() => assembled.close());
  return {
    authenticator: assembled.authenticator,
    accounting: assembled.accounting,
    administration: assembled.administration,
    responseStore: plane.responseStore,
    usageQueue: plane.usageQueue,
    circuitBus: plane.circuitBus,
    canPersistUsage: () => plane.canPersistUsage(),
    description: { ...description, rateLimitMode: plane.rateLimitMode, redis: plane.redisHost ?? 'none' },
    close: (options) => plane.close(options),
  };
}

/**
 * The services of a Node process: the undici upstream pool, prom-client metrics (served from `metrics.registry`
 * unless `metricsExposition` says otherwise: a cluster worker's asks the primary) and gpt-tokenizer.
 *
 * @example
 * const services = nodeProcessServices(createPrometheusMetrics());
 */
export function nodeProcessServices(
  metrics: PrometheusMetrics,
  metricsExposition?: GatewayServices['metricsExposition'],
): ProcessServices {
  return {
    upstreamFetch: createUndiciUpstreamFetch(),
    metrics,
    metricsExposition:
      metricsExposition ??
      (async () => ({ contentType: metrics.registry.contentType, body: await metrics.registry.metrics() })),
    tokenCounter: createGptTokenizerTokenCounter(),
  };
}

/** Reads a config file on Node. */
export const readNodeTextFile = (path: string): Promise<string> => readFile(path, 'utf8');

/**
 * Builds the gateway for one Node process from its environment (the server kit's createProcessGateway with Node's
 * services). `node dist/server.js` runs it through the server kit's lifecycle; this is for hosts wiring it
 * themselves, and for the cluster primary's start-up check of the config.
 *
 * @example
 * const { app } = await createNodeGateway(process.env, { masterKey: process.env.TORII_MASTER_KEY! });
 */
export async function createNodeGateway(
  environment: NodeJS.ProcessEnv,
  options: NodeGatewayOptions,
): Promise<NodeGateway> {
  // Without the process's own metrics: a gateway built here without them is a start-up probe (the config check).
  const metrics = options.metrics ?? createPrometheusMetrics({ processMetrics: false });
  const logger = options.logger ?? consoleLogger;
  const plane = options.dataPlane;
  const gateway = await createProcessGateway({
    environment,
    readTextFile: readNodeTextFile,
    masterKey: options.masterKey,
    logger,
    // Once per start: by the process that starts (a cluster's primary or the single process), not by every worker.
    reportConfigWarnings: !cluster.isWorker,
    accounting: plane === undefined ? undefined : nodeProcessAccounting(plane, options.masterKey, logger),
    circuitBus: options.circuitBus,
    services: {
      ...nodeProcessServices(metrics, options.metricsExposition),
      ...(options.isReady ? { isReady: options.isReady } : {}),
      ...(options.accessLog === undefined ? {} : { accessLog: options.accessLog }),
      ...(options.traces === undefined ? {} : { traces: options.traces }),
    },
  });
  return { ...gateway, metrics };
}
