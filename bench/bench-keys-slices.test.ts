import { describe, expect, it } from 'vitest';
import {
  expectedNewKeys,
  formatVariantSummary,
  formatVariantTable,
  keySliceRow,
  keysResultsDocument,
  parseRedisCommandCalls,
  summarizeVariant,
  type KeyCounters,
  type KeySliceRow,
  type KeysVariant,
} from './bench-keys-slices.ts';

function counters(overrides: Partial<KeyCounters> = {}): KeyCounters {
  return {
    at: 1_000,
    wallClock: 1_700_000_010_000,
    redisCalls: {},
    redisFailedCalls: {},
    postgresKeySelects: 0,
    postgresKeyBlocksRead: 0,
    toriiCpuTicks: 0,
    targetCpu: { busy: 0, total: 0 },
    loadCpu: { busy: 0, total: 0 },
    otherCpuTicks: 0,
    ...overrides,
  };
}

const load = { requests: 2_000, requestsPerSecond: 2_000, errors: 0, latencyMilliseconds: { p50: 5, p99: 40 } };

function slice(overrides: Partial<KeySliceRow>): KeySliceRow {
  return {
    phase: 'cold',
    start_s: 0,
    end_s: 1,
    requests: 10_000,
    rps: 10_000,
    p50_ms: 2,
    p99_ms: 8,
    errors: 0,
    postgres_key_lookups: 0,
    postgres_blocks_read: 0,
    redis_key_reads: 0,
    redis_limit_scripts: 0,
    redis_commands: 0,
    expected_new_keys: 0,
    torii_cpu_percent: 90,
    cpu0_percent: 92,
    cpu1_percent: 70,
    other_percent: 1,
    window_boundary: false,
    ...overrides,
  };
}

/** A cold -> warm run: slow while the keys are looked up, at 10,000 rps from 3 s on, 1 s slices. */
function variantRows(): KeySliceRow[] {
  return [
    slice({ start_s: 0, end_s: 1, rps: 2_000, p50_ms: 10, p99_ms: 80, postgres_key_lookups: 1_800 }),
    slice({ start_s: 1, end_s: 2, rps: 5_000, p50_ms: 5, p99_ms: 30, postgres_key_lookups: 7_000 }),
    slice({ start_s: 2, end_s: 3, rps: 8_000, postgres_key_lookups: 1_000 }),
    slice({ start_s: 3, end_s: 4, rps: 9_500, postgres_key_lookups: 190 }),
    slice({ start_s: 4, end_s: 5, rps: 9_800, postgres_key_lookups: 10 }),
    slice({ phase: 'warm', start_s: 5, end_s: 6, rps: 10_000, p50_ms: 2, p99_ms: 8 }),
    slice({ phase: 'warm', start_s: 6, end_s: 7, rps: 10_200, p50_ms: 2.2, p99_ms: 10, redis_key_reads: 3 }),
    slice({ phase: 'warm', start_s: 7, end_s: 8, rps: 9_800, p50_ms: 1.8, p99_ms: 9 }),
    slice({ phase: 'expiry', start_s: 8, end_s: 10, rps: 9_000, redis_key_reads: 1_000 }),
  ];
}

describe('parseRedisCommandCalls', () => {
  it('reads calls and failed calls per command, lower-cased', () => {
    const info = [
      '# Commandstats',
      'cmdstat_get:calls=120,usec=300,usec_per_call=2.50,rejected_calls=0,failed_calls=0',
      'cmdstat_EVALSHA:calls=41,usec=900,usec_per_call=21.95,rejected_calls=0,failed_calls=2',
      'cmdstat_info:calls=3,usec=90,usec_per_call=30.00',
      '',
    ].join('\r\n');
    expect(parseRedisCommandCalls(info)).toEqual({
      calls: { get: 120, evalsha: 41, info: 3 },
      failed: { get: 0, evalsha: 2, info: 0 },
    });
  });
});

describe('expectedNewKeys', () => {
  it('follows 1 - e^(-requests/keys) and adds up over consecutive slices', () => {
    expect(expectedNewKeys(10_000, 0, 10_000)).toBeCloseTo(6_321.2, 1);
    const slices = [0, 3_000, 9_000, 30_000, 100_000];
    let sum = 0;
    for (let index = 1; index < slices.length; index++)
      sum += expectedNewKeys(10_000, slices[index - 1]!, slices[index]!);
    expect(sum).toBeCloseTo(10_000 * (1 - Math.exp(-10)), 6);
    expect(expectedNewKeys(10_000, 50_000, 50_000)).toBe(0);
    expect(expectedNewKeys(0, 0, 10)).toBe(0);
  });
});

describe('keySliceRow', () => {
  it('takes the lookups of each tier from the counters and leaves out the GET every limit script runs', () => {
    const before = counters({
      redisCalls: { get: 100, evalsha: 10, eval: 0, set: 50, info: 4 },
      redisFailedCalls: { evalsha: 0 },
      postgresKeySelects: 7,
      postgresKeyBlocksRead: 3,
    });
    const after = counters({
      at: 2_000,
      wallClock: 1_700_000_011_000,
      // 400 GETs: 300 of the key cache, 100 inside scripts (98 EVALSHA that ran, 2 answered NOSCRIPT, 2 EVAL).
      redisCalls: { get: 500, evalsha: 110, eval: 2, set: 350, info: 6, exists: 10_000 },
      redisFailedCalls: { evalsha: 2 },
      postgresKeySelects: 307,
      postgresKeyBlocksRead: 403,
      toriiCpuTicks: 90,
      targetCpu: { busy: 95, total: 100 },
      loadCpu: { busy: 60, total: 100 },
      otherCpuTicks: 4,
    });
    const row = keySliceRow({ phase: 'cold', origin: 0, before, after, load, keys: 10_000, requestsBefore: 0 });
    expect(row).toMatchObject({
      phase: 'cold',
      start_s: 1,
      end_s: 2,
      requests: 2_000,
      rps: 2_000,
      p50_ms: 5,
      p99_ms: 40,
      postgres_key_lookups: 300,
      postgres_blocks_read: 400,
      redis_key_reads: 300,
      redis_limit_scripts: 100,
      // 400 GET + 100 EVALSHA + 2 EVAL + 300 SET; the observer's INFO and EXISTS are not torii's.
      redis_commands: 802,
      window_boundary: false,
    });
    expect(row.expected_new_keys).toBeCloseTo(10_000 * (1 - Math.exp(-0.2)), 6);
    expect(row.torii_cpu_percent).toBeCloseTo(90);
    expect(row.cpu0_percent).toBeCloseTo(95);
    expect(row.cpu1_percent).toBeCloseTo(60);
    expect(row.other_percent).toBeCloseTo(4);
  });

  it('marks a slice that spans the start of a wall-clock minute (a new rate-limit window)', () => {
    const minute = 1_700_000_040_000; // a multiple of 60,000
    const row = (from: number, to: number) =>
      keySliceRow({
        phase: 'warm',
        origin: 0,
        before: counters({ wallClock: from }),
        after: counters({ at: 2_000, wallClock: to }),
        load,
        keys: 10,
        requestsBefore: 1_000,
      }).window_boundary;
    expect(row(minute - 500, minute + 500)).toBe(true);
    expect(row(minute, minute + 1_000)).toBe(false);
    expect(row(minute - 1_000, minute - 1)).toBe(false);
  });
});

describe('summarizeVariant', () => {
  it('compares the first cold slice with the warm medians and times the way to warm', () => {
    const summary = summarizeVariant(variantRows(), 'postgres');
    expect(summary.warm_rps).toBe(10_000);
    expect(summary.warm_p50_ms).toBe(2);
    expect(summary.warm_p99_ms).toBe(9);
    expect(summary.first_slice_rps_ratio).toBeCloseTo(0.2);
    expect(summary.first_slice_p50_ratio).toBeCloseTo(5);
    expect(summary.first_slice_p99_ratio).toBeCloseTo(80 / 9);
    // 9,500 and 9,800 are >= 90% of 10,000; 8,000 is not.
    expect(summary.seconds_to_90_percent_rps).toBe(3);
    // 10,000 lookups in all: 99% (9,900) is reached with the 3-4 s slice (9,800 before it).
    expect(summary.seconds_to_99_percent_lookups).toBe(4);
    expect(summary.requests_to_99_percent_lookups).toBe(40_000);
    expect(summary.cold_postgres_key_lookups).toBe(10_000);
    expect(summary.cold_requests).toBe(50_000);
    expect(summary.warm_redis_key_reads_per_second).toBeCloseTo(1);
    expect(summary.warm_postgres_key_lookups_per_second).toBe(0);
    expect(summary.expiry_redis_key_reads_per_second).toBeCloseTo(500);
    expect(summary.errors).toBe(0);
  });

  it('needs the whole rest of the cold phase at 90%: a later dip moves the time to warm', () => {
    const rows = variantRows();
    rows[4] = { ...rows[4]!, rps: 7_000 };
    expect(summarizeVariant(rows, 'postgres').seconds_to_90_percent_rps).toBeNull();
    rows[4] = { ...rows[4]!, rps: 9_000 };
    rows[1] = { ...rows[1]!, rps: 9_900 };
    expect(summarizeVariant(rows, 'postgres').seconds_to_90_percent_rps).toBe(3);
  });

  it('times the lookups of the tier the variant is about, and answers nulls without warm slices', () => {
    const rows = variantRows().map((row, index) => ({
      ...row,
      postgres_key_lookups: 0,
      redis_key_reads: row.phase === 'cold' ? [5_000, 4_000, 900, 100, 0][index]! : row.redis_key_reads,
    }));
    expect(summarizeVariant(rows, 'redis').seconds_to_99_percent_lookups).toBe(3);
    expect(summarizeVariant(rows, 'postgres').seconds_to_99_percent_lookups).toBeNull();
    const coldOnly = summarizeVariant(
      rows.filter((row) => row.phase === 'cold'),
      'redis',
    );
    expect(coldOnly.warm_rps).toBeNull();
    expect(coldOnly.first_slice_rps_ratio).toBeNull();
    expect(coldOnly.seconds_to_90_percent_rps).toBeNull();
  });
});

describe('the printed report and the JSON', () => {
  const variant: KeysVariant = {
    name: 'cold-redis',
    description: 'fresh process, Redis flushed',
    tier: 'postgres',
    heldInRedisAtStart: 0,
    rows: variantRows().map((row, index) => (index === 3 ? { ...row, window_boundary: true, errors: 2 } : row)),
    summary: summarizeVariant(variantRows(), 'postgres'),
  };

  it('prints one line per slice, marking the slice that spans a window start', () => {
    const lines = formatVariantTable(variant).split('\n');
    expect(lines[0]).toMatch(/^phase\s+t_s\s+rps\s+p50_ms\s+p99_ms\s+errors\s+pg_lookups/);
    expect(lines).toHaveLength(2 + variant.rows.length);
    expect(lines[2]).toMatch(/^cold\s+0\.0-1\.0\s+2000\s+10\.000\s+80\.000\s+0\s+1800\s/);
    expect(lines[5]).toContain('3.0-4.0*');
    expect(lines[10]).toMatch(/^expiry\s+8\.0-10\.0\s/);
  });

  it('sums up the warm medians, the ratios and the way to warm', () => {
    const text = formatVariantSummary(variant).join('\n');
    expect(text).toContain('10000 rps, p50 2.000 ms, p99 9.000 ms');
    expect(text).toContain('first cold slice / warm: rps 0.20x, p50 5.00x, p99 8.89x');
    expect(text).toContain('rps at >= 90% of warm from 3.0 s on');
    expect(text).toContain("99% of the cold phase's Postgres lookups done by 4.0 s (40000 requests)");
    expect(text).not.toContain('WARNING');
    const withErrors = { ...variant, summary: summarizeVariant(variant.rows, 'postgres') };
    expect(formatVariantSummary(withErrors).join('\n')).toContain('WARNING: 2 errors');
  });

  it('rounds the numbers for the JSON file and keeps the settings', () => {
    const rows = [slice({ start_s: 0.123456, rps: 1234.5678, p99_ms: 8.123456, expected_new_keys: 12.345 })];
    const document = keysResultsDocument({ total_keys: 1_000_000 }, [
      { ...variant, rows, summary: summarizeVariant(rows, 'postgres') },
    ]) as { settings: object; variants: Array<{ held_in_redis_at_start: number; rows: KeySliceRow[] }> };
    expect(document.settings).toEqual({ total_keys: 1_000_000 });
    expect(document.variants[0]!.held_in_redis_at_start).toBe(0);
    expect(document.variants[0]!.rows[0]).toMatchObject({
      start_s: 0.12,
      rps: 1234.6,
      p99_ms: 8.123,
      expected_new_keys: 12.3,
    });
  });
});
