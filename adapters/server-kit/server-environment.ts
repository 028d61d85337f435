import type { RateLimitMode } from '../../src/limits/rate-limiter.ts';
import { readDatabaseSetting, type DatabaseSetting } from '../shared/database-setting.ts';
import { readRateLimitMode } from '../shared/rate-limit-mode-setting.ts';
import { circuitRefreshVariable, readCircuitRefreshMs } from '../shared/circuit-refresh-setting.ts';
import { StartupError } from '../shared/startup-error.ts';

/** Settings of a standalone server process (Deno, Bun), read from its environment. */
export interface ServerSettings {
  port: number;
  hostname: string;
  /** How long in-flight requests (streams included) may take to finish after SIGTERM, ms. */
  shutdownGraceMs: number;
  /** Postgres (postgres-js); absent: the embedded database `database` names, in `dataDirectory`. */
  databaseUrl: string | undefined;
  /** `TORII_DATABASE` with `DATABASE_URL`: postgres, sqlite (the default embedded database), pglite, or off. */
  database: DatabaseSetting;
  /** The postgres-js pool size (default 4). */
  databasePoolMax: number | undefined;
  /** Where the migrations are, when not beside the sources. */
  migrationsFolder: string | undefined;
  /** Local state: the embedded database's files and the usage spill. */
  dataDirectory: string;
  /** The Upstash Redis database shared by every instance (key cache, rate limits, budget counters). */
  upstash: { url: string; token: string } | undefined;
  /** How long an instance trusts its in-memory copy of a key, ms: how soon key changes reach other instances. */
  keyCacheTtlMs: number;
  rateLimitMode: RateLimitMode | undefined;
  /** How often the shared circuit breakers are read from Upstash, ms (`TORII_CIRCUIT_REFRESH_MS`, 1000). */
  circuitRefreshMs: number;
}

/** The default {@link ServerSettings.keyCacheTtlMs}: no invalidation bus reaches other instances of a standalone server. */
export const defaultServerKeyCacheTtlMs = 5_000;

function nonNegativeInteger(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0)
    throw new StartupError(name, `must be a non-negative integer, got "${value}"`);
  return parsed;
}

function positiveOrUndefined(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = nonNegativeInteger(value, name, 0);
  if (parsed < 1) throw new StartupError(name, `must be a positive integer, got "${value}"`);
  return parsed;
}

/**
 * Reads PORT (8787), HOST (0.0.0.0), TORII_SHUTDOWN_GRACE_MS (25000), DATABASE_URL, TORII_DATABASE_POOL_MAX (4),
 * TORII_MIGRATIONS_DIR, TORII_DATA_DIR (`.torii`),
 * UPSTASH_REDIS_REST_URL with UPSTASH_REDIS_REST_TOKEN, TORII_KEY_CACHE_TTL_MS (5000), TORII_RATE_LIMIT_MODE and
 * TORII_CIRCUIT_REFRESH_MS (1000).
 * A malformed value throws a StartupError naming the variable.
 */
export function readServerSettings(environment: Record<string, string | undefined>): ServerSettings {
  const upstashUrl = environment.UPSTASH_REDIS_REST_URL || undefined;
  const upstashToken = environment.UPSTASH_REDIS_REST_TOKEN || undefined;
  if ((upstashUrl === undefined) !== (upstashToken === undefined))
    throw new StartupError(
      upstashUrl === undefined ? 'UPSTASH_REDIS_REST_URL' : 'UPSTASH_REDIS_REST_TOKEN',
      'set both UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN, or neither',
    );
  const keyCacheTtlMs = nonNegativeInteger(
    environment.TORII_KEY_CACHE_TTL_MS,
    'TORII_KEY_CACHE_TTL_MS',
    defaultServerKeyCacheTtlMs,
  );
  if (keyCacheTtlMs < 1) throw new StartupError('TORII_KEY_CACHE_TTL_MS', 'must be at least 1');
  const circuitRefresh = readCircuitRefreshMs(environment[circuitRefreshVariable]);
  if ('problem' in circuitRefresh) throw new StartupError(circuitRefreshVariable, circuitRefresh.problem);
  const port = nonNegativeInteger(environment.PORT, 'PORT', 8787);
  if (port > 65_535) throw new StartupError('PORT', `must be an integer from 0 to 65535, got "${environment.PORT}"`);
  return {
    port,
    hostname: environment.HOST || '0.0.0.0',
    shutdownGraceMs: nonNegativeInteger(environment.TORII_SHUTDOWN_GRACE_MS, 'TORII_SHUTDOWN_GRACE_MS', 25_000),
    databaseUrl: environment.DATABASE_URL || undefined,
    database: readDatabaseSetting(environment),
    databasePoolMax: positiveOrUndefined(environment.TORII_DATABASE_POOL_MAX, 'TORII_DATABASE_POOL_MAX'),
    migrationsFolder: environment.TORII_MIGRATIONS_DIR || undefined,
    dataDirectory: environment.TORII_DATA_DIR || '.torii',
    upstash:
      upstashUrl === undefined || upstashToken === undefined ? undefined : { url: upstashUrl, token: upstashToken },
    keyCacheTtlMs,
    rateLimitMode: readRateLimitMode(environment),
    circuitRefreshMs: circuitRefresh.ms,
  };
}
