import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Hono } from 'hono';
import { builtinProviders } from '../../providers/index.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { createGateway } from '../../src/gateway.ts';
import type { GatewayEnvironment } from '../../src/routes/gateway-context.ts';
import type { GatewayServices } from '../../src/services.ts';
import { loadGatewayConfig } from '../shared/load-gateway-config.ts';
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
  const app = createGateway({
    config,
    providers: builtinProviders,
    authenticator: createMasterKeyAuthenticator(options.masterKey, {
      // One-shot, synchronous hashing: no Hash object and no trip through the thread pool that Web Crypto takes.
      sha256: (text) => hash('sha256', text, 'buffer'),
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
