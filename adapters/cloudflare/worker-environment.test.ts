import { describe, expect, it } from 'vitest';
import type { KeyCountersNamespace } from './durable-object-limit-store.ts';
import {
  databaseConnectionString,
  defaultWorkerKeyCacheTtlMs,
  readWorkerAccountingSettings,
} from './worker-environment.ts';

/** A Durable Object binding as far as the settings look at it (only its presence matters). */
const counters = {} as KeyCountersNamespace;
const hyperdrive = { connectionString: 'postgres://user:password@hyperdrive.local:5432/torii' };

describe('readWorkerAccountingSettings', () => {
  it('serves the master key only (no settings) when no database is bound', () => {
    expect(readWorkerAccountingSettings({ TORII_MASTER_KEY: 'sk-master-key' })).toBeUndefined();
    expect(readWorkerAccountingSettings({ TORII_KEY_COUNTERS: counters, DATABASE_URL: '' })).toBeUndefined();
  });

  it('takes the Hyperdrive binding before DATABASE_URL', () => {
    expect(databaseConnectionString({ HYPERDRIVE: hyperdrive, DATABASE_URL: 'postgres://direct/torii' })).toBe(
      hyperdrive.connectionString,
    );
    expect(databaseConnectionString({ DATABASE_URL: 'postgres://direct/torii' })).toBe('postgres://direct/torii');
  });

  it('defaults to leased limits with the Durable Object, local without, and a 5 s key cache', () => {
    expect(readWorkerAccountingSettings({ HYPERDRIVE: hyperdrive, TORII_KEY_COUNTERS: counters })).toEqual({
      connectionString: hyperdrive.connectionString,
      rateLimitMode: 'leased',
      localKeyTtlMs: defaultWorkerKeyCacheTtlMs,
    });
    expect(defaultWorkerKeyCacheTtlMs).toBe(5_000);
    expect(readWorkerAccountingSettings({ HYPERDRIVE: hyperdrive })?.rateLimitMode).toBe('local');
  });

  it('takes TORII_RATE_LIMIT_MODE and TORII_KEY_CACHE_TTL_MS', () => {
    expect(
      readWorkerAccountingSettings({
        HYPERDRIVE: hyperdrive,
        TORII_KEY_COUNTERS: counters,
        TORII_RATE_LIMIT_MODE: 'strict',
        TORII_KEY_CACHE_TTL_MS: '2000',
      }),
    ).toMatchObject({ rateLimitMode: 'strict', localKeyTtlMs: 2_000 });
  });

  it('lists every bad setting at once', () => {
    expect(() =>
      readWorkerAccountingSettings({
        HYPERDRIVE: hyperdrive,
        TORII_RATE_LIMIT_MODE: 'exact',
        TORII_KEY_CACHE_TTL_MS: '5s',
      }),
    ).toThrow(/TORII_RATE_LIMIT_MODE: must be leased, strict or local[\s\S]*TORII_KEY_CACHE_TTL_MS/);
    expect(() => readWorkerAccountingSettings({ HYPERDRIVE: hyperdrive, TORII_RATE_LIMIT_MODE: 'strict' })).toThrow(
      /strict needs the TORII_KEY_COUNTERS Durable Object binding/,
    );
  });
});
