import { StartupError } from '../shared/startup-error.ts';

/** Server settings read from the environment of a Node process. */
export interface NodeServerSettings {
  port: number;
  hostname: string | undefined;
  workers: number;
  /** How long in-flight requests (streams included) may take to finish after SIGTERM, ms. */
  shutdownGraceMs: number;
  /** Time a client has to send the request line and all headers, ms (TORII_HEADERS_TIMEOUT_MS). */
  headersTimeoutMs: number;
  /** Time a client has to send the whole request, body included, ms (TORII_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept between requests, ms (TORII_KEEP_ALIVE_TIMEOUT_MS). */
  keepAliveTimeoutMs: number;
  /** Most connections one process (one cluster worker) holds; more are closed at once (TORII_MAX_CONNECTIONS). */
  maxConnections: number;
  /**
   * How long a cluster worker's event loop may go without a heartbeat before the primary kills and replaces it, ms
   * (TORII_WORKER_HEARTBEAT_TIMEOUT_MS).
   */
  workerHeartbeatTimeoutMs: number;
  /** How long a new cluster worker may take to start listening before it is killed and replaced, ms. */
  workerStartTimeoutMs: number;
  /**
   * How long the event loop of the cluster primary or of a single process may stand still before the process kills
   * itself rather than hang, ms; 0 turns it off (TORII_EVENT_LOOP_STALL_TIMEOUT_MS).
   */
  eventLoopStallTimeoutMs: number;
}

/** The defaults of {@link NodeServerSettings} (README: "Limits and timeouts"). */
export const nodeServerDefaults = {
  port: 8787,
  shutdownGraceMs: 25_000,
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 120_000,
  // Above the 60 s idle timeout of common load balancers, so the balancer, not the gateway, closes idle connections.
  keepAliveTimeoutMs: 65_000,
  maxConnections: 10_000,
  workerHeartbeatTimeoutMs: 10_000,
  workerStartTimeoutMs: 60_000,
  eventLoopStallTimeoutMs: 30_000,
} as const;

function integerSetting(
  environment: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  { minimum, maximum = Number.MAX_SAFE_INTEGER }: { minimum: number; maximum?: number },
): number {
  const value = environment[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(parsed) || parsed < minimum || parsed > maximum) {
    const range =
      maximum === Number.MAX_SAFE_INTEGER
        ? `an integer of at least ${minimum}`
        : `an integer from ${minimum} to ${maximum}`;
    throw new StartupError(name, `must be ${range}, got "${value}"`);
  }
  return parsed;
}

/**
 * Reads PORT (default 8787), HOST, TORII_WORKERS (default: one per core; 1 = no cluster), TORII_SHUTDOWN_GRACE_MS
 * (25000), the client timeouts TORII_HEADERS_TIMEOUT_MS (30000), TORII_REQUEST_TIMEOUT_MS (120000, at least the
 * headers timeout), TORII_KEEP_ALIVE_TIMEOUT_MS (65000), TORII_MAX_CONNECTIONS (10000 per process), and the
 * watchdogs TORII_WORKER_HEARTBEAT_TIMEOUT_MS (10000), TORII_WORKER_START_TIMEOUT_MS (60000) and
 * TORII_EVENT_LOOP_STALL_TIMEOUT_MS (30000; 0 = off). A malformed value throws a {@link StartupError} naming it.
 * TORII_LOG_LEVEL is read beside it, by node-logging.ts (shared with Deno and Workers: log-level-setting.ts).
 */
export function readNodeServerSettings(environment: NodeJS.ProcessEnv, cores: number): NodeServerSettings {
  const defaults = nodeServerDefaults;
  const workers = integerSetting(environment, 'TORII_WORKERS', cores, { minimum: 0 });
  const headersTimeoutMs = integerSetting(environment, 'TORII_HEADERS_TIMEOUT_MS', defaults.headersTimeoutMs, {
    minimum: 1,
  });
  const requestTimeoutMs = integerSetting(
    environment,
    'TORII_REQUEST_TIMEOUT_MS',
    Math.max(defaults.requestTimeoutMs, headersTimeoutMs),
    { minimum: 1 },
  );
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new StartupError(
      'TORII_REQUEST_TIMEOUT_MS',
      `must be at least TORII_HEADERS_TIMEOUT_MS (${headersTimeoutMs}), got "${requestTimeoutMs}" (the whole request includes its headers)`,
    );
  }
  const eventLoopStallTimeoutMs = integerSetting(
    environment,
    'TORII_EVENT_LOOP_STALL_TIMEOUT_MS',
    defaults.eventLoopStallTimeoutMs,
    { minimum: 0 },
  );
  if (eventLoopStallTimeoutMs > 0 && eventLoopStallTimeoutMs < 1_000) {
    throw new StartupError(
      'TORII_EVENT_LOOP_STALL_TIMEOUT_MS',
      `must be 0 (off) or at least 1000, got "${eventLoopStallTimeoutMs}"`,
    );
  }
  return {
    port: integerSetting(environment, 'PORT', defaults.port, { minimum: 0, maximum: 65_535 }),
    hostname: environment.HOST || undefined,
    workers: workers === 0 ? cores : workers,
    shutdownGraceMs: integerSetting(environment, 'TORII_SHUTDOWN_GRACE_MS', defaults.shutdownGraceMs, { minimum: 0 }),
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: integerSetting(environment, 'TORII_KEEP_ALIVE_TIMEOUT_MS', defaults.keepAliveTimeoutMs, {
      minimum: 1,
    }),
    maxConnections: integerSetting(environment, 'TORII_MAX_CONNECTIONS', defaults.maxConnections, { minimum: 1 }),
    workerHeartbeatTimeoutMs: integerSetting(
      environment,
      'TORII_WORKER_HEARTBEAT_TIMEOUT_MS',
      defaults.workerHeartbeatTimeoutMs,
      { minimum: 100 },
    ),
    workerStartTimeoutMs: integerSetting(environment, 'TORII_WORKER_START_TIMEOUT_MS', defaults.workerStartTimeoutMs, {
      minimum: 100,
    }),
    eventLoopStallTimeoutMs,
  };
}
