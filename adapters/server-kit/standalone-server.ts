import { createAccessLog } from '../../src/observability/access-log.ts';
import { createGatewayPrometheusMetrics } from '../../src/observability/gateway-metrics.ts';
import { createJsonLogger } from '../../src/observability/json-logger.ts';
import { prometheusContentType, renderPrometheusText } from '../../src/observability/prometheus-text.ts';
import { usageQueueFamilies } from '../../src/observability/usage-queue-metrics.ts';
import { createFetchUpstream } from '../../src/upstream/fetch-upstream.ts';
// Runtime-neutral (pure JavaScript, a dynamic import): Deno and Bun load gpt-tokenizer from node_modules as Node does.
import { createGptTokenizerTokenCounter } from '../shared/gpt-tokenizer-token-counter.ts';
import { readLogLevel } from '../shared/log-level-setting.ts';
import { serverProcessFamilies } from './process-metric-families.ts';
import type { ProcessAccounting } from './process-accounting.ts';
import { openServerAccounting, type ServerAccountingRuntime } from './server-accounting.ts';
import { readServerSettings, type ServerSettings } from './server-environment.ts';
import { startGatewayProcess, type GatewayProcess, type ServedGateway } from './start-gateway-process.ts';
import { openUpstashCircuitPolling } from './upstash-circuit-polling.ts';

/** What a standalone runtime (Deno, Bun) gives {@link startStandaloneServer}: its few runtime-specific calls. */
export interface StandaloneRuntime<Served extends ServedGateway> extends ServerAccountingRuntime {
  name: 'deno' | 'bun';
  environment: Record<string, string | undefined>;
  readTextFile(path: string): Promise<string>;
  /** Lets a timer run without keeping the process alive. */
  unrefTimer(timer: ReturnType<typeof setInterval>): void;
  /** Serves `fetch` on the runtime's HTTP server at the settings' port and host, with its grace period on drain. */
  serve(fetch: (request: Request) => Response | Promise<Response>, settings: ServerSettings): Promise<Served>;
  onStopSignal(listener: () => void): void;
  exit(code: number): void;
}

/**
 * A standalone gateway server on Deno or Bun, on the server kit's lifecycle: settings from the environment
 * (server-environment.ts), keys, limits, budgets and the ledger in Postgres (`DATABASE_URL`) or the embedded SQLite or
 * PGlite, Upstash Redis shared by every instance (key cache, rate limits, budget counters, circuit breakers within
 * `TORII_CIRCUIT_REFRESH_MS`), upstream calls through the runtime's fetch, gpt-tokenizer for `count_tokens`, JSON logs
 * at `TORII_LOG_LEVEL` with one access line per request, and `GET /metrics` with the same Prometheus families as Node.
 *
 * @example
 * await startStandaloneServer({ name: 'bun', environment: process.env, ...bunCalls });
 */
export async function startStandaloneServer<Served extends ServedGateway>(
  runtime: StandaloneRuntime<Served>,
): Promise<GatewayProcess<Served>> {
  const { environment } = runtime;
  const level = readLogLevel(environment);
  const logger = createJsonLogger({ level });
  const settings = readServerSettings(environment);
  const circuits = openUpstashCircuitPolling(settings, logger, runtime.unrefTimer);
  const metrics = createGatewayPrometheusMetrics();
  try {
    return await startGatewayProcess({
      runtime: runtime.name,
      environment,
      logger,
      accessLog: createAccessLog({ level }),
      readTextFile: runtime.readTextFile,
      circuitBus: circuits?.bus,
      async openAccounting(masterKey): Promise<ProcessAccounting | undefined> {
        const opened = await openServerAccounting(settings, masterKey, logger, runtime);
        if (opened === undefined) return undefined;
        const { accounting } = opened;
        return {
          authenticator: accounting.authenticator,
          accounting: accounting.accounting,
          administration: accounting.administration,
          responseStore: accounting.responseStore,
          usageQueue: accounting.usageQueue,
          canPersistUsage: () => true,
          description: {
            database: opened.database,
            sharedCache: opened.sharedCache,
            rateLimitMode: opened.rateLimitMode,
            keyCacheTtlMs: settings.keyCacheTtlMs,
          },
          close: (options) => accounting.close(options),
        };
      },
      services(accounting) {
        const families = [
          ...metrics.families,
          ...(accounting === undefined ? [] : usageQueueFamilies(accounting.usageQueue, { role: 'ledger' })),
          ...serverProcessFamilies(runtime.name),
        ];
        return {
          upstreamFetch: createFetchUpstream(),
          metrics,
          metricsExposition: () =>
            Promise.resolve({ contentType: prometheusContentType, body: renderPrometheusText(families) }),
          tokenCounter: createGptTokenizerTokenCounter(),
        };
      },
      serve: (app) => runtime.serve((request) => app.fetch(request), settings),
      // Replaced by the accounting's own description when it opened.
      announcementFields: { database: 'none', sharedCache: 'none', rateLimitMode: 'none' },
      onStopSignal: runtime.onStopSignal,
      beforeDrain: () => circuits?.stop(),
      exit: runtime.exit,
    });
  } catch (error) {
    circuits?.stop();
    throw error;
  }
}
