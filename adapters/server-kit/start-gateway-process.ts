import type { Hono } from 'hono';
import type { GatewayEnvironment } from '../../src/gateway-environment.ts';
import type { AccessLog } from '../../src/observability/access-log.ts';
import type { LeveledLogger } from '../../src/observability/json-logger.ts';
import type { GatewayServices, UpstreamFetch } from '../../src/services.ts';
import { resolveMasterKey } from '../shared/resolve-master-key.ts';
import { openTraceExport } from '../shared/trace-export-settings.ts';
import type { CircuitBus } from '../../src/routing/circuit-bus.ts';
import { announceGateway } from './gateway-announcement.ts';
import type { ProcessAccounting } from './process-accounting.ts';
import { createProcessGateway, type ProcessGateway } from './process-gateway.ts';

/** How long shutdown may spend writing queued usage before the rest goes to the disk spill. */
export const usageFlushTimeoutMs = 5_000;

/** A gateway serving on a runtime's HTTP server, as the lifecycle stops it. */
export interface ServedGateway {
  /** Where it listens, as a client calls it, for the start-up line. */
  url: string;
  /** Whether the server still takes new requests (false once draining). */
  isAccepting(): boolean;
  /**
   * Stops taking requests and waits for in-flight ones (streams included) up to the runtime's grace period; answers
   * how many were cut when it ran out (`undefined` where the server cannot count them).
   */
  drain(): Promise<{ complete: boolean; unfinished?: number | undefined }>;
}

/** The runtime's services for the gateway, made once its accounting is open (metrics may export the usage queue). */
export type ProcessServices = Partial<Omit<GatewayServices, 'logger' | 'accessLog' | 'traces' | 'isReady'>> & {
  upstreamFetch: UpstreamFetch;
};

/**
 * What one runtime gives the server kit's lifecycle ({@link startGatewayProcess}): its environment, logging, file
 * reader, accounting, services, HTTP server, signals and exit. Everything else (the config, the master key, span
 * export, the gateway, the start-up line, drain, usage flush) is the kit's, the same on every runtime.
 */
export interface GatewayProcessHost<Served extends ServedGateway = ServedGateway> {
  /** `node`, `deno`, `bun`: named in the start-up line. */
  runtime: string;
  environment: Record<string, string | undefined>;
  /** The process's logger at TORII_LOG_LEVEL, and its access log (absent below `info`). */
  logger: LeveledLogger;
  accessLog?: AccessLog | undefined;
  readTextFile(path: string): Promise<string>;
  /** The package version, for exported spans' `service.version`. */
  serviceVersion?: string | undefined;
  /** Opens keys, limits, budgets and the ledger; undefined serves the master key only (no database). */
  openAccounting(masterKey: string): Promise<ProcessAccounting | undefined>;
  /** The runtime's upstream client, metrics, token counter, for the accounting it opened. */
  services(accounting: ProcessAccounting | undefined): ProcessServices;
  /** How circuit changes reach other processes when the accounting carries none. */
  circuitBus?: CircuitBus | undefined;
  /**
   * Serves the gateway's app (its `fetch`, and on Node its direct routes) on the runtime's HTTP server; a start
   * failure throws (a StartupError naming PORT or HOST).
   */
  serve(app: Hono<GatewayEnvironment>): Promise<Served>;
  /**
   * Whether this process prints the start-up line (default true) and the LiteLLM config's warnings: a cluster worker
   * leaves both to its primary, which prints them once for the cluster.
   */
  announces?: boolean;
  /** More fields for the start-up line (workers, the runtime's settings). */
  announcementFields?: Record<string, unknown>;
  /** Registers the stop listener for SIGTERM and SIGINT. */
  onStopSignal(listener: () => void): void;
  /** Runs first when stopping (background timers the runtime started). */
  beforeDrain?(): void;
  /** Ends the process once everything is flushed. */
  exit(code: number): void;
}

/** A started gateway process: its gateway and server, and the stop a signal runs. */
export interface GatewayProcess<Served extends ServedGateway = ServedGateway> {
  gateway: ProcessGateway;
  server: Served;
  /** Stops as SIGTERM does: drain, flush usage and spans, close, exit 0. Runs once. */
  stop(): Promise<void>;
}

/**
 * The one lifecycle of a gateway server process, which Node (a single process or a cluster worker), Deno and Bun call:
 * config → master key → accounting → span export → gateway → serve → start-up line; then on SIGTERM or SIGINT: stop
 * accepting (`/health/ready` answers 503), let in-flight requests finish within the grace period, push pending budget
 * spend and flush the usage queue (5 s, then the rest goes to the disk spill), send the queued spans, exit 0.
 * A start that fails after the accounting opened closes it before throwing.
 *
 * @example
 * await startGatewayProcess({
 *   runtime: 'bun',
 *   environment: process.env,
 *   logger,
 *   readTextFile: (path) => Bun.file(path).text(),
 *   openAccounting: async () => undefined,
 *   services: () => ({ upstreamFetch: createFetchUpstream() }),
 *   serve: async (app) => serveOnBun(app.fetch),
 *   onStopSignal: (stop) => process.on('SIGTERM', stop),
 *   exit: (code) => process.exit(code),
 * });
 */
export async function startGatewayProcess<Served extends ServedGateway>(
  host: GatewayProcessHost<Served>,
): Promise<GatewayProcess<Served>> {
  const { environment, logger } = host;
  const announces = host.announces !== false;
  const masterKey = resolveMasterKey(environment);
  const accounting = await host.openAccounting(masterKey.key);
  const closeAccounting = () =>
    accounting
      ?.close({ timeoutMs: usageFlushTimeoutMs })
      .catch((error: unknown) => logger.error('usage flush failed', { error: String(error) }));
  // OpenTelemetry spans, when an OTLP endpoint is set: queued in memory, sent every second and at shutdown.
  let tracing: ReturnType<typeof openTraceExport>;
  const running: { server?: Served; stopping: boolean } = { stopping: false };
  let gateway: ProcessGateway;
  try {
    tracing = openTraceExport(environment, logger, {
      flushEveryMs: 1_000,
      ...(host.serviceVersion === undefined ? {} : { serviceVersion: host.serviceVersion }),
    });
    gateway = await createProcessGateway({
      environment,
      readTextFile: host.readTextFile,
      masterKey: masterKey.key,
      logger,
      reportConfigWarnings: announces,
      accounting,
      circuitBus: host.circuitBus,
      services: {
        ...host.services(accounting),
        ...(host.accessLog === undefined ? {} : { accessLog: host.accessLog }),
        ...(tracing === undefined ? {} : { traces: tracing.traces }),
        // Not ready while draining, or while usage can be persisted nowhere (database and spill both failing).
        isReady: () =>
          !running.stopping && (running.server?.isAccepting() ?? false) && (accounting?.canPersistUsage() ?? true),
      },
    });
    running.server = await host.serve(gateway.app);
  } catch (error) {
    await accounting?.close({ timeoutMs: 0 }).catch(() => {});
    throw error;
  }
  const server = running.server;
  if (announces)
    announceGateway(logger, {
      url: server.url,
      configSource: gateway.configSource,
      modelGroups: gateway.modelGroups,
      generatedMasterKey: masterKey.generated ? masterKey.key : undefined,
      fields: { runtime: host.runtime, ...host.announcementFields, ...accounting?.description },
    });
  const stop = async (): Promise<void> => {
    if (running.stopping) return;
    running.stopping = true;
    host.beforeDrain?.();
    const drained = await server.drain();
    if (!drained.complete)
      logger.warn(
        'grace period over; closing unfinished requests',
        drained.unfinished === undefined ? {} : { unfinished: drained.unfinished },
      );
    // Usage of every finished request goes to the database (or the primary, or the disk spill) before exit.
    await closeAccounting();
    await tracing?.close();
    host.exit(0);
  };
  host.onStopSignal(() => void stop());
  return { gateway, server, stop };
}
