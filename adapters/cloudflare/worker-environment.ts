import { ConfigError } from '../../src/config/config-error.ts';
import type { RateLimitMode } from '../../src/limits/rate-limiter.ts';
import type { CircuitsNamespace } from './durable-object-circuit-store.ts';
import type { KeyCountersNamespace } from './durable-object-limit-store.ts';
import type { WorkersQueue } from './queue-usage-sink.ts';
import type { WorkersKvNamespace } from './workers-kv-key-value-cache.ts';

/**
 * The Worker's bindings (wrangler.toml). Only `TORII_MASTER_KEY` is required: without a database the Worker serves the
 * master key alone, as a stateless proxy. With one, it is the full gateway: virtual keys, limits, budgets, the ledger
 * and the admin API.
 */
export interface WorkerEnvironment {
  /** The gateway config as an object (a `[vars]` table) or a JSON string (a secret or `--var`). */
  TORII_CONFIG?: unknown;
  TORII_MASTER_KEY?: string;
  /** Postgres through Hyperdrive (preferred: it pools the real connections near the database). */
  HYPERDRIVE?: { connectionString: string };
  /** Postgres directly, when there is no Hyperdrive binding (each use opens a TCP+TLS connection of its own). */
  DATABASE_URL?: string;
  /** The KV namespace of the shared key cache. */
  TORII_CACHE?: WorkersKvNamespace;
  /** The `ToriiKeyCounters` Durable Object namespace: rate limits and budget spend shared by every isolate. */
  TORII_KEY_COUNTERS?: KeyCountersNamespace;
  /** The `ToriiCircuits` Durable Object namespace: circuit breakers shared by every isolate. */
  TORII_CIRCUITS?: CircuitsNamespace;
  /** How often an isolate that serves reads the shared circuit breakers, ms (default 1000). */
  TORII_CIRCUIT_REFRESH_MS?: string;
  /** The Queue that carries usage events to the ledger (this Worker's `queue()` handler is its consumer). */
  TORII_USAGE_QUEUE?: WorkersQueue;
  /** `leased` (default with the Durable Object), `strict` or `local`. */
  TORII_RATE_LIMIT_MODE?: string;
  /** `debug`, `info` (default: one access line per request), `warn`, `error` or `silent`. */
  TORII_LOG_LEVEL?: string;
  /** How long an isolate trusts its in-memory copy of a key, ms (default 5000): the revocation bound within a colo. */
  TORII_KEY_CACHE_TTL_MS?: string;
  [name: string]: unknown;
}

/** What the accounting part of the Worker is configured with, read from the bindings and vars. */
export interface WorkerAccountingSettings {
  connectionString: string;
  rateLimitMode: RateLimitMode;
  localKeyTtlMs: number;
}

/** The default of `TORII_KEY_CACHE_TTL_MS`. */
export const defaultWorkerKeyCacheTtlMs = 5_000;

function readRateLimitMode(environment: WorkerEnvironment, problems: string[]): RateLimitMode {
  const hasStore = environment.TORII_KEY_COUNTERS !== undefined;
  const value = environment.TORII_RATE_LIMIT_MODE;
  if (value === undefined || value === '') return hasStore ? 'leased' : 'local';
  if (value !== 'leased' && value !== 'strict' && value !== 'local') {
    problems.push(`TORII_RATE_LIMIT_MODE: must be leased, strict or local, got "${String(value)}"`);
    return 'local';
  }
  if (value !== 'local' && !hasStore)
    problems.push(`TORII_RATE_LIMIT_MODE: ${value} needs the TORII_KEY_COUNTERS Durable Object binding`);
  return value;
}

function readKeyCacheTtl(environment: WorkerEnvironment, problems: string[]): number {
  const value = environment.TORII_KEY_CACHE_TTL_MS;
  if (value === undefined || value === '') return defaultWorkerKeyCacheTtlMs;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 600_000) {
    problems.push(`TORII_KEY_CACHE_TTL_MS: must be a whole number of ms from 0 to 600000, got "${String(value)}"`);
    return defaultWorkerKeyCacheTtlMs;
  }
  return parsed;
}

/** The Postgres connection string: the Hyperdrive binding's, else `DATABASE_URL`; undefined when neither is set. */
export function databaseConnectionString(environment: WorkerEnvironment): string | undefined {
  const hyperdrive = environment.HYPERDRIVE?.connectionString;
  if (typeof hyperdrive === 'string' && hyperdrive !== '') return hyperdrive;
  const url = environment.DATABASE_URL;
  return typeof url === 'string' && url !== '' ? url : undefined;
}

/**
 * The accounting settings, or undefined when no database is bound (the Worker then serves the master key only).
 * Throws a {@link ConfigError} listing every problem.
 */
export function readWorkerAccountingSettings(environment: WorkerEnvironment): WorkerAccountingSettings | undefined {
  const connectionString = databaseConnectionString(environment);
  const problems: string[] = [];
  const rateLimitMode = readRateLimitMode(environment, problems);
  const localKeyTtlMs = readKeyCacheTtl(environment, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  if (connectionString === undefined) return undefined;
  return { connectionString, rateLimitMode, localKeyTtlMs };
}
