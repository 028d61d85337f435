import { describe, expect, it } from 'vitest';
import {
  formatNetwork,
  mergeNetworkWindows,
  networkDocument,
  networkFindings,
  networkWindow,
  parseRedisCommandStats,
  type NetworkCounters,
  type NetworkWindow,
} from './bench-network.ts';

function counters(overrides: Partial<NetworkCounters> = {}): NetworkCounters {
  return { at: 0, redisCommands: {}, postgresTransactions: 0, postgresInsertedRows: 0, ...overrides };
}

/** What a warm request path should look like: 30,000 requests in 3 s, a few background calls, batched ledger. */
function quietWindow(overrides: Partial<NetworkWindow> = {}): NetworkWindow {
  return {
    scenario: 'chat',
    connections: 32,
    requests: 30_000,
    seconds: 3,
    redisCommands: { evalsha: 3, set: 12, get: 9 },
    postgresTransactions: 60,
    postgresInsertedRows: 30_000,
    ...overrides,
  };
}

describe('parseRedisCommandStats', () => {
  it('reads the calls of every command, subcommands included', () => {
    const info = [
      '# Commandstats',
      'cmdstat_evalsha:calls=120,usec=900,usec_per_call=7.50,rejected_calls=0,failed_calls=0',
      'cmdstat_client|setname:calls=2,usec=3,usec_per_call=1.50,rejected_calls=0,failed_calls=0',
      'cmdstat_GET:calls=7,usec=9,usec_per_call=1.29,rejected_calls=0,failed_calls=0',
      '',
    ].join('\r\n');
    expect(parseRedisCommandStats(info)).toEqual({ evalsha: 120, 'client|setname': 2, get: 7 });
    expect(parseRedisCommandStats('')).toEqual({});
  });
});

describe('networkWindow and mergeNetworkWindows', () => {
  it('takes the differences, leaves out the observer and unchanged commands, and sums rounds', () => {
    const before = counters({
      at: 1_000,
      redisCommands: { evalsha: 10, info: 4, get: 5 },
      postgresTransactions: 100,
      postgresInsertedRows: 1_000,
    });
    const after = counters({
      at: 4_000,
      redisCommands: { evalsha: 13, info: 6, get: 5, set: 2 },
      postgresTransactions: 106,
      postgresInsertedRows: 4_000,
    });
    const window = networkWindow(before, after, { scenario: 'chat', connections: 20, rate: 1_000 }, 3_000);
    expect(window).toEqual({
      scenario: 'chat',
      connections: 20,
      rate: 1_000,
      requests: 3_000,
      seconds: 3,
      redisCommands: { evalsha: 3, set: 2 },
      postgresTransactions: 6,
      postgresInsertedRows: 3_000,
    });
    const other = quietWindow();
    const merged = mergeNetworkWindows([window, other, window]);
    expect(merged).toHaveLength(2);
    expect(merged[0]).toMatchObject({
      rate: 1_000,
      requests: 6_000,
      seconds: 6,
      redisCommands: { evalsha: 6, set: 4 },
      postgresTransactions: 12,
      postgresInsertedRows: 6_000,
    });
    expect(merged[1]).toEqual(other);
    // Merging does not change the windows it was given.
    expect(window.redisCommands).toEqual({ evalsha: 3, set: 2 });
  });
});

describe('networkFindings and formatNetwork', () => {
  const ledger = { rows: 30_020, completedRequests: 30_000, uncountedAtMost: 32 };

  it('finds nothing on a warm, batched request path', () => {
    expect(networkFindings([quietWindow()], ledger)).toEqual([]);
    const text = formatNetwork([quietWindow()], ledger);
    expect(text).toContain(
      'production chat c32 max: 30000 requests in 3.0 s; per 1,000 requests: Redis 0.80 commands (8.0/s), ' +
        'Postgres 2.00 transactions and 1000 inserted rows',
    );
    expect(text).toContain('Redis by command per 1,000 requests: set 0.40, get 0.30, evalsha 0.10');
    expect(text).toContain('ledger rows for the bench key after production exited: 30020 for 30000 completed requests');
    expect(text).not.toContain('WARNING');
  });

  it('flags a Redis command or Postgres transactions on the request path', () => {
    const findings = networkFindings(
      [quietWindow({ redisCommands: { get: 30_000, evalsha: 3 }, postgresTransactions: 30_000 })],
      undefined,
    );
    expect(findings).toContainEqual(
      'production chat c32 max: Redis GET 1000.0 per 1,000 requests: a call on the request path',
    );
    expect(findings).toContainEqual(
      'production chat c32 max: 1000.0 Postgres transactions per 1,000 requests: a query on the request path',
    );
    expect(formatNetwork([quietWindow({ redisCommands: { get: 30_000 } })], undefined)).toContain('WARNING: ');
  });

  it('flags Redis traffic that grows with the rate although it stays under one call per 10 requests', () => {
    const findings = networkFindings([quietWindow({ redisCommands: { evalsha: 1_290 } })], undefined);
    expect(findings).toEqual([
      'production chat c32 max: 430 Redis commands per second, more than background timers explain (43.0 per 1,000 ' +
        'requests: not per request, but growing with the request rate)',
    ]);
  });

  it('flags more than one ledger row per request, missing rows, and a window without requests', () => {
    expect(networkFindings([quietWindow({ postgresInsertedRows: 60_000 })], undefined)).toEqual([
      'production chat c32 max: 2000 inserted rows per 1,000 requests: more than one row per request',
    ]);
    expect(networkFindings([], { rows: 29_000, completedRequests: 30_000, uncountedAtMost: 32 })).toEqual([
      'ledger: 29000 rows for the bench key, expected 30000 to 30032 (one per request made with it)',
    ]);
    expect(networkFindings([], { rows: 30_033, completedRequests: 30_000, uncountedAtMost: 32 })).toHaveLength(1);
    expect(networkFindings([quietWindow({ requests: 0 })], undefined)).toEqual([
      'production chat c32 max: no requests completed, nothing to attribute the counts to',
    ]);
  });
});

describe('networkDocument', () => {
  it('writes raw counts and counts per 1,000 requests per measurement, and the ledger check', () => {
    const document = networkDocument([quietWindow(), quietWindow({ connections: 20, rate: 1_000, requests: 3_000 })], {
      rows: 33_010,
      completedRequests: 33_000,
      uncountedAtMost: 52,
    }) as { measurements: Record<string, unknown>[]; ledger: Record<string, unknown> };
    expect(document.measurements[0]).toEqual({
      target: 'production',
      scenario: 'chat',
      connections: 32,
      requests: 30_000,
      seconds: 3,
      redis_commands: { evalsha: 3, set: 12, get: 9 },
      redis_commands_per_1000_requests: { evalsha: 0.1, set: 0.4, get: 0.3 },
      redis_total_per_1000_requests: 0.8,
      redis_total_per_second: 8,
      postgres_transactions: 60,
      postgres_transactions_per_1000_requests: 2,
      postgres_inserted_rows: 30_000,
      postgres_inserted_rows_per_1000_requests: 1_000,
    });
    expect(document.measurements[1]).toMatchObject({ rate: 1_000, postgres_transactions_per_1000_requests: 20 });
    expect(document.ledger).toEqual({ key_rows: 33_010, completed_requests: 33_000, uncounted_at_most: 52 });
    expect(networkDocument([], undefined)).toEqual({ measurements: [], ledger: null });
  });
});
