/// <reference lib="deno.ns" />
import { builtinProviders } from '../../providers/index.ts';
import { bundledPriceTable } from '../../src/usage/price-table.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { createGateway } from '../../src/gateway.ts';
import { runtimeSecrets } from '../shared/runtime-secrets.ts';
import { createFetchUpstream } from '../../src/upstream/fetch-upstream.ts';
// Runtime-neutral (pure JavaScript, a dynamic import): Deno loads gpt-tokenizer from node_modules as Node does.
import { createGptTokenizerTokenCounter } from '../shared/gpt-tokenizer-token-counter.ts';
import type { GatewayLogger } from '../../src/services.ts';
import { createAccessLog } from '../../src/observability/access-log.ts';
import { createGatewayPrometheusMetrics } from '../../src/observability/gateway-metrics.ts';
import { createJsonLogger } from '../../src/observability/json-logger.ts';
import { prometheusContentType, renderPrometheusText } from '../../src/observability/prometheus-text.ts';
import { readLogLevel } from '../shared/log-level-setting.ts';
import { usageQueueFamilies } from '../../src/observability/usage-queue-metrics.ts';
import { denoProcessFamilies } from './deno-process-metrics.ts';
import { loadGatewayConfig } from '../shared/load-gateway-config.ts';
import { resolveMasterKey } from '../shared/resolve-master-key.ts';
import { StartupError } from '../shared/startup-error.ts';
import { openTraceExport } from '../shared/trace-export-settings.ts';
import { openDenoAccounting } from './deno-accounting.ts';
import { readDenoServerSettings, type DenoServerSettings } from './deno-environment.ts';
import { createPolledCircuitBus, type PolledCircuitBus } from '../../src/routing/polled-circuit-bus.ts';
import { createUpstashCircuitStore } from '../shared/upstash-circuit-store.ts';
import { createUpstashRedisClient } from '../shared/upstash-redis-client.ts';

/** How the Deno server starts; every field defaults from the environment. */
export interface DenoServerOptions {
  environment?: Record<string, string | undefined>;
  port?: number;
  hostname?: string;
}

/** How long shutdown may spend writing queued usage before the rest goes to the disk spill. */
const usageFlushTimeoutMs = 5_000;

/**
 * With Upstash, circuit changes are shared with every other instance through a hash there, read every
 * `circuitRefreshMs` on a timer that keeps no process alive (Upstash's REST API has no push).
 */
function openDenoCircuitBus(
  settings: DenoServerSettings,
  logger: GatewayLogger,
): { bus: PolledCircuitBus; stop(): void } | undefined {
  if (settings.upstash === undefined) return undefined;
  const store = createUpstashCircuitStore({ redis: createUpstashRedisClient(settings.upstash) });
  const bus = createPolledCircuitBus(store, { logger, refreshMs: settings.circuitRefreshMs });
  // Four looks per interval, so a read is never more than a quarter interval late.
  const timer = setInterval(() => bus.refreshIfDue(), Math.max(25, settings.circuitRefreshMs / 4));
  Deno.unrefTimer(timer);
  bus.refreshIfDue();
  return { bus, stop: () => clearInterval(timer) };
}

/**
 * Serves the gateway with `Deno.serve` (upstream calls through Deno's fetch, which pools connections; gpt-tokenizer
 * counts `count_tokens` to OpenAI models, loaded on first use). Config comes from `TORII_CONFIG` or the embedded
 * defaults. Keys, limits, budgets, the usage ledger and the Responses API's stored responses work as in a Node single
 * process (see deno-accounting.ts): Postgres (`DATABASE_URL`) or PGlite on local disk, and Upstash Redis over REST
 * (`UPSTASH_REDIS_REST_URL`, `UPSTASH_REDIS_REST_TOKEN`) shared by every instance, circuit breakers included (within
 * `TORII_CIRCUIT_REFRESH_MS`, 1 s). Without a database no response is stored.
 *
 * SIGTERM and SIGINT: stop accepting (`/health/ready` answers 503), let in-flight requests finish (up to
 * `TORII_SHUTDOWN_GRACE_MS`), push pending budget spend, flush the usage queue (5 s, then the rest is spilled to
 * disk), close the database, exit 0.
 *
 * Logs are JSON lines on the console at `TORII_LOG_LEVEL` (`info`: one access line per request); `GET /metrics`
 * serves the same Prometheus families as Node (src/observability/gateway-metrics.ts) with the process's own.
 *
 * @example
 * // deno run --allow-net --allow-env --allow-read --allow-write adapters/deno/server.ts
 * await startDenoServer({ port: 8787 });
 */
export async function startDenoServer(options: DenoServerOptions = {}): Promise<Deno.HttpServer> {
  const environment = options.environment ?? Deno.env.toObject();
  const level = readLogLevel(environment);
  const logger = createJsonLogger({ level });
  const { config, source, warnings } = await loadGatewayConfig(environment, builtinProviders, (path) =>
    Deno.readTextFile(path),
  );
  // A LiteLLM config's parts torii did not take, once at start (paths and reasons only, never values).
  if (warnings.length > 0)
    logger.warn(`converted the LiteLLM config ${source}; ${warnings.length} part(s) not taken`, {
      notTaken: warnings,
    });
  const settings = readDenoServerSettings(environment);
  const masterKey = resolveMasterKey(environment);
  const opened = await openDenoAccounting(settings, masterKey.key, logger);
  const accounting = opened?.accounting;
  const circuits = openDenoCircuitBus(settings, logger);
  const metrics = createGatewayPrometheusMetrics();
  const families = [
    ...metrics.families,
    ...(accounting === undefined ? [] : usageQueueFamilies(accounting.usageQueue, { role: 'ledger' })),
    ...denoProcessFamilies(),
  ];
  const accessLog = createAccessLog({ level });
  // OpenTelemetry spans, when an OTLP endpoint is set: queued in memory, sent every second and at shutdown.
  const tracing = openTraceExport(environment, logger, { flushEveryMs: 1_000 });
  let accepting = true;
  const app = createGateway({
    config,
    providers: builtinProviders,
    priceTable: bundledPriceTable,
    authenticator: accounting?.authenticator ?? createMasterKeyAuthenticator(masterKey.key),
    secrets: runtimeSecrets(environment, masterKey.key),
    ...(accounting === undefined
      ? {}
      : {
          accounting: accounting.accounting,
          administration: accounting.administration,
          responses: { store: accounting.responseStore },
        }),
    // Deno keeps timers running between requests: the config's health checks can run.
    routing: { backgroundHealthChecks: true, ...(circuits === undefined ? {} : { circuitBus: circuits.bus }) },
    services: {
      upstreamFetch: createFetchUpstream(),
      logger,
      metrics,
      metricsExposition: () =>
        Promise.resolve({ contentType: prometheusContentType, body: renderPrometheusText(families) }),
      ...(accessLog === undefined ? {} : { accessLog }),
      ...(tracing === undefined ? {} : { traces: tracing.traces }),
      isReady: () => accepting,
      tokenCounter: createGptTokenizerTokenCounter(),
    },
  });
  const port = options.port ?? settings.port;
  const hostname = options.hostname ?? settings.hostname;
  let server: Deno.HttpServer;
  try {
    server = Deno.serve({ port, hostname, onListen: () => {} }, app.fetch);
  } catch (error) {
    await accounting?.close({ timeoutMs: 0 }).catch(() => {});
    const name = (error as Error | undefined)?.name;
    if (name === 'AddrInUse') throw new StartupError('PORT', `port ${port} on ${hostname} is already in use`);
    if (name === 'PermissionDenied' && !String((error as Error).message).includes('--allow'))
      throw new StartupError('PORT', `permission denied to listen on port ${port} (ports below 1024 need privileges)`);
    if (name === 'AddrNotAvailable') throw new StartupError('HOST', `cannot listen on "${hostname}"`);
    throw error;
  }
  // At `warn` when it carries a generated master key: the only place that key is shown.
  logger[masterKey.generated ? 'warn' : 'info'](
    `torii listening on http://${hostname === '0.0.0.0' ? 'localhost' : hostname}:${port}`,
    {
      runtime: 'deno',
      config: source,
      modelGroups: Object.keys(config.modelGroups),
      database: opened?.database ?? 'none',
      sharedCache: opened?.sharedCache ?? 'none',
      rateLimitMode: opened?.rateLimitMode ?? 'none',
      ...(opened === undefined ? {} : { keyCacheTtlMs: settings.keyCacheTtlMs }),
      ...(masterKey.generated
        ? { masterKey: masterKey.key, note: 'generated for this run; set TORII_MASTER_KEY to choose one' }
        : {}),
    },
  );
  const stop = async (): Promise<void> => {
    if (!accepting) return;
    accepting = false;
    circuits?.stop();
    let graceTimer: ReturnType<typeof setTimeout> | undefined;
    const finished = await Promise.race([
      server.shutdown().then(() => true),
      new Promise<false>((resolve) => (graceTimer = setTimeout(() => resolve(false), settings.shutdownGraceMs))),
    ]);
    clearTimeout(graceTimer);
    if (!finished) logger.warn('grace period over; closing unfinished requests');
    // Usage of every finished request goes to the database (or the disk spill) before exit.
    await accounting
      ?.close({ timeoutMs: usageFlushTimeoutMs })
      .catch((error: unknown) => logger.error('usage flush failed', { error: String(error) }));
    await tracing?.close();
    Deno.exit(0);
  };
  Deno.addSignalListener('SIGTERM', () => void stop());
  Deno.addSignalListener('SIGINT', () => void stop());
  return server;
}
