import type { Hono } from 'hono';
import { builtinProviders } from '../../providers/index.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { createGateway } from '../../src/gateway.ts';
import type { GatewayEnvironment } from '../../src/gateway-environment.ts';
import type { CircuitBus } from '../../src/routing/circuit-bus.ts';
import type { GatewayLogger, GatewayServices, UpstreamFetch } from '../../src/services.ts';
import { bundledPriceTable } from '../../src/usage/price-table.ts';
import { loadGatewayConfig } from '../shared/load-gateway-config.ts';
import { runtimeSecrets } from '../shared/runtime-secrets.ts';
import type { ProcessAccounting } from './process-accounting.ts';

/** What {@link createProcessGateway} builds a server process's gateway from. */
export interface ProcessGatewayOptions {
  environment: Record<string, string | undefined>;
  /** The runtime's file reader, for `TORII_CONFIG`. */
  readTextFile(path: string): Promise<string>;
  masterKey: string;
  logger: GatewayLogger;
  /**
   * Whether this process logs what a LiteLLM config held that torii did not take (default true): the process that
   * starts says it once, a cluster's workers leave it to their primary.
   */
  reportConfigWarnings?: boolean;
  /** Keys, limits, usage and stored responses; without it the gateway takes the master key only and keeps no ledger. */
  accounting?: ProcessAccounting | undefined;
  /** How circuit changes reach other processes when the accounting carries none. */
  circuitBus?: CircuitBus | undefined;
  /** The runtime's services: its upstream client, metrics, token counter, access log, readiness. */
  services: Partial<Omit<GatewayServices, 'logger'>> & { upstreamFetch: UpstreamFetch };
}

/** A server process's gateway, and what its start-up line says about it. */
export interface ProcessGateway {
  app: Hono<GatewayEnvironment>;
  configSource: string;
  modelGroups: string[];
  /** What a LiteLLM config held that torii did not take (empty for torii's own format). */
  configWarnings: string[];
}

/** How long start-up waits for the circuit bus's subscription before serving without it. */
const circuitSubscriptionTimeoutMs = 5_000;

/**
 * Builds the gateway of one server process, the same on every runtime: the config from `TORII_CONFIG` (or the
 * embedded defaults from the provider keys), the built-in providers and bundled prices, the virtual-key authenticator
 * of `accounting` or the master key alone, the secrets no answer or log line may carry, background health checks, and
 * the circuit bus. Resolves once this process hears the circuit changes other processes publish (bounded by 5 s, then
 * logged), so it never serves a deployment every other process already cooled.
 *
 * @example
 * const { app } = await createProcessGateway({
 *   environment: process.env,
 *   readTextFile: (path) => readFile(path, 'utf8'),
 *   masterKey,
 *   logger,
 *   services: { upstreamFetch: createFetchUpstream() },
 * });
 */
export async function createProcessGateway(options: ProcessGatewayOptions): Promise<ProcessGateway> {
  const { environment, logger, accounting } = options;
  const { config, source, warnings } = await loadGatewayConfig(environment, builtinProviders, options.readTextFile);
  // Paths and reasons only, never values.
  if (warnings.length > 0 && options.reportConfigWarnings !== false)
    logger.warn(`converted the LiteLLM config ${source}; ${warnings.length} part(s) not taken`, {
      notTaken: warnings,
    });
  const circuitBus = accounting?.circuitBus ?? options.circuitBus;
  const app = createGateway({
    config,
    providers: builtinProviders,
    priceTable: bundledPriceTable,
    authenticator: accounting?.authenticator ?? createMasterKeyAuthenticator(options.masterKey),
    secrets: runtimeSecrets(environment, options.masterKey),
    ...(accounting === undefined
      ? {}
      : {
          accounting: accounting.accounting,
          administration: accounting.administration,
          responses: { store: accounting.responseStore },
        }),
    // Server processes keep timers running between requests: the config's health checks can run.
    routing: { backgroundHealthChecks: true, ...(circuitBus === undefined ? {} : { circuitBus }) },
    services: { ...options.services, logger },
  });
  await whenCircuitsHeard(circuitBus, logger);
  return { app, configSource: source, modelGroups: Object.keys(config.modelGroups), configWarnings: warnings };
}

/**
 * Waits for the circuit bus's subscription: a process serving before Redis (or the primary) confirmed it would keep
 * sending to deployments every other process had already cooled. Bounded: a bus that does not confirm in time is
 * logged, and serving goes on (delivery is at most once anyway).
 */
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
