import type { Hono } from 'hono';
import { loadBuiltinProviders } from '../../providers/lazy-providers.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { isLiteLLMConfig } from '../../src/config/litellm-detect.ts';
import { withPresetEnvironment } from '../../src/config/preset-environment.ts';
import { builtinPresets } from '../../providers/builtin-presets.ts';
import type { GatewayConfig } from '../../src/config/config-schema.ts';
import { parseJson } from '../../src/framing/parse-json.ts';
import { createGateway } from '../../src/gateway.ts';
import { createFetchUpstream } from '../../src/upstream/fetch-upstream.ts';
import { secretsOfUrl } from '../../src/security/secret-redactor.ts';
import type { GatewayEnvironment } from '../../src/gateway-environment.ts';
import type { GatewayLogger, GatewayServices } from '../../src/services.ts';
import { createAccessLog } from '../../src/observability/access-log.ts';
import { createJsonLogger } from '../../src/observability/json-logger.ts';
import type { LogLevel } from '../../src/observability/log-level.ts';
import { readLogLevel } from '../shared/log-level-setting.ts';
import { isStartupError } from '../shared/startup-error.ts';
import { createPolledCircuitBus, type PolledCircuitBus } from '../../src/routing/polled-circuit-bus.ts';
import { circuitRefreshVariable, readCircuitRefreshMs } from '../shared/circuit-refresh-setting.ts';
import { createDurableObjectCircuitStore } from './durable-object-circuit-store.ts';
import type { WorkerAccounting } from './worker-accounting.ts';
import { keepAlive } from './worker-request-scope.ts';
import {
  databaseConnectionString,
  readWorkerAccountingSettings,
  type WorkerEnvironment,
} from './worker-environment.ts';

/** The gateway of one Worker isolate. */
export interface WorkerGateway {
  app: Hono<GatewayEnvironment>;
  /** Keys, limits, budgets and the ledger; undefined when no database is bound (master key only). */
  accounting: WorkerAccounting | undefined;
  /** The circuit breakers shared through the `TORII_CIRCUITS` Durable Object; undefined when it is not bound. */
  circuits: PolledCircuitBus | undefined;
}

/**
 * The shared circuit breakers, when `TORII_CIRCUITS` is bound: changes are written in the background of the request
 * that saw them, and each isolate reads the object at most every `TORII_CIRCUIT_REFRESH_MS` (the Worker calls
 * `refreshIfDue` per request, since an isolate has no timers of its own between requests).
 */
function openWorkerCircuits(environment: WorkerEnvironment, logger: GatewayLogger): PolledCircuitBus | undefined {
  const namespace = environment.TORII_CIRCUITS;
  if (namespace === undefined) return undefined;
  const refresh = readCircuitRefreshMs(environment.TORII_CIRCUIT_REFRESH_MS);
  if ('problem' in refresh) throw new ConfigError([`${circuitRefreshVariable}: ${refresh.problem}`]);
  return createPolledCircuitBus(createDurableObjectCircuitStore(namespace), {
    logger,
    refreshMs: refresh.ms,
    keepAlive: (work) => void keepAlive(work),
  });
}

/** Runs `read`, a bad setting reported as the Worker reports any (a ConfigError). */
function asConfigError<Value>(read: () => Value): Value {
  try {
    return read();
  } catch (error) {
    if (isStartupError(error)) throw new ConfigError([`${error.setting}: ${error.reason}`]);
    throw error;
  }
}

/** `TORII_LOG_LEVEL`, an invalid value reported as a ConfigError. */
function workerLogLevel(environment: WorkerEnvironment): LogLevel {
  return asConfigError(() => readLogLevel(environment));
}

/**
 * The `traces` service when an OTLP endpoint is set: an isolate's timers do not outlive its requests, so each
 * request's span is sent after the response, kept alive by that invocation's `waitUntil`.
 */
async function workerTraces(environment: WorkerEnvironment, logger: GatewayLogger): Promise<GatewayServices['traces']> {
  // Off unless an endpoint is set; the exporter is a chunk of its own, never evaluated by a Worker without one.
  if (
    environment.OTEL_EXPORTER_OTLP_ENDPOINT === undefined &&
    environment.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT === undefined
  )
    return undefined;
  const { openTraceExport } = await import('../shared/trace-export-settings.ts');
  const tracing = asConfigError(() => openTraceExport(environment, logger));
  if (tracing === undefined) return undefined;
  return (observation) => {
    tracing.exporter.record(observation);
    void keepAlive(tracing.exporter.flush());
  };
}

function stringValues(environment: WorkerEnvironment): Record<string, string | undefined> {
  const values: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(environment)) if (typeof value === 'string') values[name] = value;
  return values;
}

/**
 * The config from TORII_CONFIG (JSON text or an object): torii's own, or a LiteLLM proxy config (recognised by its
 * `model_list`, converted; what was not taken is logged once per isolate, by path and reason).
 */
async function readConfig(environment: WorkerEnvironment, logger: GatewayLogger): Promise<GatewayConfig> {
  let raw: unknown = environment.TORII_CONFIG ?? { modelGroups: {} };
  if (typeof raw === 'string') {
    const parsed = parseJson(raw);
    if (!parsed.ok) throw new ConfigError([`TORII_CONFIG: not valid JSON (${parsed.error})`]);
    raw = parsed.value;
  }
  const values = stringValues(environment);
  if (!isLiteLLMConfig(raw)) return withPresetEnvironment(parseGatewayConfig(raw, values), builtinPresets, values);
  // The converter is loaded only for a LiteLLM config: a Worker on torii's own config never evaluates it.
  const { prepareConfigInput } = await import('../../src/config/config-input.ts');
  const input = prepareConfigInput(raw, values);
  if (input.warnings.length > 0)
    logger.warn(`converted the LiteLLM config; ${input.warnings.length} part(s) not taken`, {
      notTaken: input.warnings,
    });
  return withPresetEnvironment(parseGatewayConfig(input.raw, input.environment), builtinPresets, input.environment);
}

/**
 * Builds the gateway from the Worker's bindings: the master key alone when no database is bound (as small and fast
 * as a stateless proxy: the database code is loaded with a dynamic import, so it is never evaluated; no response is
 * stored), or the full gateway with virtual keys, limits, budgets, the ledger, the admin API and the Responses API's
 * stored responses (worker-accounting.ts). Throws a
 * {@link ConfigError} for a missing master key or a bad config; opens no connection (the database is first used by
 * the first request that needs it).
 *
 * @example
 * ```ts
 * const { app, accounting } = await buildWorkerGateway(env);
 * ```
 */
export async function buildWorkerGateway(environment: WorkerEnvironment): Promise<WorkerGateway> {
  const masterKey = environment.TORII_MASTER_KEY;
  if (typeof masterKey !== 'string' || masterKey === '') {
    throw new ConfigError(['TORII_MASTER_KEY: not set; add it with `wrangler secret put TORII_MASTER_KEY`']);
  }
  const level = workerLogLevel(environment);
  const logger = createJsonLogger({ level });
  const accessLog = createAccessLog({ level });
  const traces = await workerTraces(environment, logger);
  const config = await readConfig(environment, logger);
  // Only the translators the config names are loaded (each provider beyond OpenAI-compatible and Anthropic is its
  // own chunk), so a Worker pays for the providers it uses.
  const builtinProviders = await loadBuiltinProviders(config);
  // The price table (~50 KB) is its own chunk too: evaluated once per isolate, not part of the start-up bundle.
  const { bundledPriceTable: priceTable } = await import('../../src/usage/price-table.ts');
  const settings = readWorkerAccountingSettings(environment);
  const circuits = openWorkerCircuits(environment, logger);
  const routing = circuits === undefined ? {} : { routing: { circuitBus: circuits } };
  // Upstream calls use the platform fetch: undici cannot run on workerd. Its clocks stand still while code runs (they
  // move only when I/O completes, a Spectre mitigation), so the gateway's own time is reported as unmeasured rather
  // than as 0 (timing-headers.ts); Cloudflare's dashboard and `wrangler tail` report the Worker's CPU time.
  const services = {
    upstreamFetch: createFetchUpstream(),
    logger,
    ...(accessLog === undefined ? {} : { accessLog }),
    ...(traces === undefined ? {} : { traces }),
    clockAdvancesDuringCompute: false,
  };
  // Beyond the config's own secrets: the master key and the database's credentials never reach a client or a log.
  const databaseUrl = databaseConnectionString(environment);
  const secrets = [masterKey, ...(databaseUrl === undefined ? [] : secretsOfUrl(databaseUrl))];
  if (settings === undefined) {
    const app = createGateway({
      config,
      providers: builtinProviders,
      priceTable,
      authenticator: createMasterKeyAuthenticator(masterKey),
      services,
      secrets,
      ...routing,
    });
    return { app, accounting: undefined, circuits };
  }
  const { openWorkerAccounting } = await import('./worker-accounting.ts');
  const accounting = openWorkerAccounting(environment, settings, masterKey, logger);
  const app = createGateway({
    config,
    providers: builtinProviders,
    priceTable,
    authenticator: accounting.authenticator,
    accounting: accounting.accounting,
    administration: accounting.administration,
    responses: { store: accounting.responseStore },
    services,
    secrets,
    ...routing,
  });
  return { app, accounting, circuits };
}
