import { describe, expect, it } from 'vitest';
import { defaultDenoKeyCacheTtlMs, readDenoServerSettings } from './deno-environment.ts';

describe('readDenoServerSettings', () => {
  it('defaults to SQLite in .torii, no shared cache, and a 5 s key propagation bound', () => {
    expect(readDenoServerSettings({})).toEqual({
      port: 8787,
      hostname: '0.0.0.0',
      shutdownGraceMs: 25_000,
      databaseUrl: undefined,
      database: 'sqlite',
      databasePoolMax: undefined,
      migrationsFolder: undefined,
      dataDirectory: '.torii',
      upstash: undefined,
      keyCacheTtlMs: defaultDenoKeyCacheTtlMs,
      rateLimitMode: undefined,
      circuitRefreshMs: 1000,
    });
    expect(defaultDenoKeyCacheTtlMs).toBe(5_000);
  });

  it('reads every variable', () => {
    expect(
      readDenoServerSettings({
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
    expect(() => readDenoServerSettings({ UPSTASH_REDIS_REST_URL: 'https://example.upstash.io' })).toThrow(
      /UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN/,
    );
    expect(() => readDenoServerSettings({ UPSTASH_REDIS_REST_TOKEN: 'token' })).toThrow(/UPSTASH_REDIS_REST_URL/);
    expect(() => readDenoServerSettings({ TORII_KEY_CACHE_TTL_MS: '0' })).toThrow(/TORII_KEY_CACHE_TTL_MS/);
    expect(() => readDenoServerSettings({ TORII_KEY_CACHE_TTL_MS: '5s' })).toThrow(/TORII_KEY_CACHE_TTL_MS/);
    expect(() => readDenoServerSettings({ TORII_DATABASE_POOL_MAX: '0' })).toThrow(/TORII_DATABASE_POOL_MAX/);
    expect(() => readDenoServerSettings({ PORT: '-1' })).toThrow(/PORT/);
    expect(() => readDenoServerSettings({ TORII_RATE_LIMIT_MODE: 'exact' })).toThrow(/TORII_RATE_LIMIT_MODE/);
    expect(() => readDenoServerSettings({ TORII_DATABASE: 'mysql' })).toThrow(/TORII_DATABASE/);
    expect(() => readDenoServerSettings({ TORII_CIRCUIT_REFRESH_MS: '50' })).toThrow(/TORII_CIRCUIT_REFRESH_MS/);
    expect(() => readDenoServerSettings({ TORII_CIRCUIT_REFRESH_MS: '1s' })).toThrow(/TORII_CIRCUIT_REFRESH_MS/);
  });

  it('opens the embedded SQLite by default; TORII_DATABASE chooses pglite or off', () => {
    expect(readDenoServerSettings({}).database).toBe('sqlite');
    expect(readDenoServerSettings({ TORII_DATABASE: 'pglite' }).database).toBe('pglite');
    expect(readDenoServerSettings({ TORII_DATABASE: 'off' }).database).toBe('off');
  });
});
