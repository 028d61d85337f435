import { describe, expect, it } from 'vitest';
import { defaultServerKeyCacheTtlMs, readServerSettings } from './server-environment.ts';

describe('readServerSettings', () => {
  it('defaults to SQLite in .torii, no shared cache, and a 5 s key propagation bound', () => {
    expect(readServerSettings({})).toEqual({
      port: 8787,
      hostname: '0.0.0.0',
      shutdownGraceMs: 25_000,
      databaseUrl: undefined,
      database: 'sqlite',
      databasePoolMax: undefined,
      migrationsFolder: undefined,
      dataDirectory: '.torii',
      upstash: undefined,
      keyCacheTtlMs: defaultServerKeyCacheTtlMs,
      rateLimitMode: undefined,
      circuitRefreshMs: 1000,
    });
    expect(defaultServerKeyCacheTtlMs).toBe(5_000);
  });

  it('reads every variable', () => {
    expect(
      readServerSettings({
        PORT: '9000',
        HOST: '127.0.0.1',
        TORII_SHUTDOWN_GRACE_MS: '1000',
        DATABASE_URL: 'postgres://db/torii',
        TORII_DATABASE_POOL_MAX: '2',
        TORII_MIGRATIONS_DIR: '/migrations',
        TORII_DATA_DIR: '/var/lib/torii',
        UPSTASH_REDIS_REST_URL: 'https://example.upstash.io',
        UPSTASH_REDIS_REST_TOKEN: 'token',
        TORII_KEY_CACHE_TTL_MS: '2000',
        TORII_RATE_LIMIT_MODE: 'strict',
        TORII_CIRCUIT_REFRESH_MS: '250',
      }),
    ).toEqual({
      port: 9000,
      hostname: '127.0.0.1',
      shutdownGraceMs: 1000,
      databaseUrl: 'postgres://db/torii',
      database: 'postgres',
      databasePoolMax: 2,
      migrationsFolder: '/migrations',
      dataDirectory: '/var/lib/torii',
      upstash: { url: 'https://example.upstash.io', token: 'token' },
      keyCacheTtlMs: 2000,
      rateLimitMode: 'strict',
      circuitRefreshMs: 250,
    });
  });

  it('refuses half an Upstash configuration and malformed numbers or modes, naming the variable', () => {
    expect(() => readServerSettings({ UPSTASH_REDIS_REST_URL: 'https://example.upstash.io' })).toThrow(
      /UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN/,
    );
    expect(() => readServerSettings({ UPSTASH_REDIS_REST_TOKEN: 'token' })).toThrow(/UPSTASH_REDIS_REST_URL/);
    expect(() => readServerSettings({ TORII_KEY_CACHE_TTL_MS: '0' })).toThrow(/TORII_KEY_CACHE_TTL_MS/);
    expect(() => readServerSettings({ TORII_KEY_CACHE_TTL_MS: '5s' })).toThrow(/TORII_KEY_CACHE_TTL_MS/);
    expect(() => readServerSettings({ TORII_DATABASE_POOL_MAX: '0' })).toThrow(/TORII_DATABASE_POOL_MAX/);
    expect(() => readServerSettings({ PORT: '-1' })).toThrow(/PORT/);
    expect(() => readServerSettings({ TORII_RATE_LIMIT_MODE: 'exact' })).toThrow(/TORII_RATE_LIMIT_MODE/);
    expect(() => readServerSettings({ TORII_DATABASE: 'mysql' })).toThrow(/TORII_DATABASE/);
    expect(() => readServerSettings({ TORII_CIRCUIT_REFRESH_MS: '50' })).toThrow(/TORII_CIRCUIT_REFRESH_MS/);
    expect(() => readServerSettings({ TORII_CIRCUIT_REFRESH_MS: '1s' })).toThrow(/TORII_CIRCUIT_REFRESH_MS/);
  });

  it('opens the embedded SQLite by default; TORII_DATABASE chooses pglite or off', () => {
    expect(readServerSettings({}).database).toBe('sqlite');
    expect(readServerSettings({ TORII_DATABASE: 'pglite' }).database).toBe('pglite');
    expect(readServerSettings({ TORII_DATABASE: 'off' }).database).toBe('off');
  });
});
