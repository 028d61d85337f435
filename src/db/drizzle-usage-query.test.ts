import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testStoreDrivers, type TestStores } from '../../tests/services/test-database.ts';
import type { UsageTotals } from '../usage/usage-query.ts';
import { usageEventFixture } from './test-utils/usage-event-fixture.ts';

const day1 = Date.UTC(2025, 3, 1);
const day2 = Date.UTC(2025, 3, 2);
const hour = 3_600_000;

/** Totals of `requests` events each with these numbers. */
const totals = (
  requests: number,
  each: { input: number; output: number; cached: number; reasoning: number; cost: number },
): UsageTotals => ({
  requests,
  inputTokens: requests * each.input,
  outputTokens: requests * each.output,
  cachedInputTokens: requests * each.cached,
  reasoningTokens: requests * each.reasoning,
  costUsd: requests * each.cost,
});

const small = { input: 100, output: 10, cached: 50, reasoning: 0, cost: 0.25 };
const large = { input: 1_000, output: 500, cached: 0, reasoning: 200, cost: 2 };

// The UsageQuery conformance cases, on the Drizzle query over Postgres and PGlite and the SQLite one
// (./sqlite-usage-query.ts).
describe.each(testStoreDrivers)('usage query on $driver', ({ create }) => {
  let stores: TestStores;

  beforeAll(async () => {
    stores = await create();
    const event = (
      keyId: string | null,
      modelGroup: string | null,
      provider: string | null,
      startedAt: number,
      each: typeof small,
    ) =>
      usageEventFixture({
        keyId,
        modelGroup,
        provider,
        startedAt,
        inputTokens: each.input,
        outputTokens: each.output,
        cachedInputTokens: each.cached,
        reasoningTokens: each.reasoning,
        costUsd: each.cost,
      });
    await stores.usageSink().write([
      // day 1: key_a 3 small on gpt (openai), key_b 2 large on claude (anthropic), master key 1 small failed early
      ...[1, 2, 3].map((offset) => event('key_a', 'gpt', 'openai', day1 + offset * hour, small)),
      ...[4, 5].map((offset) => event('key_b', 'claude', 'anthropic', day1 + offset * hour, large)),
      event(null, null, null, day1 + 6 * hour, small),
      // day 2: key_a 1 large on claude, 23:59:59.999 UTC still counts as day 2
      event('key_a', 'claude', 'anthropic', day2 + 24 * hour - 1, large),
      // outside the ranges used below: the last millisecond before day 1, and day 3 exactly
      event('key_a', 'gpt', 'openai', day1 - 1, small),
      event('key_b', 'gpt', 'openai', day2 + 24 * hour, small),
    ]);
  }, 60_000);
  afterAll(() => stores?.drop());

  const range = { from: day1, to: day2 + 24 * hour };

  it('totals a range [from, to) in one row', async () => {
    const usage = stores.usageQuery();
    expect(await usage.summarize(range)).toEqual([
      {
        requests: 7,
        inputTokens: 4 * 100 + 3 * 1_000,
        outputTokens: 4 * 10 + 3 * 500,
        cachedInputTokens: 4 * 50,
        reasoningTokens: 3 * 200,
        costUsd: 4 * 0.25 + 3 * 2,
      },
    ]);
    expect(await usage.summarize({ from: day1 - 1, to: day1 })).toEqual([totals(1, small)]);
  });

  it('answers zeros for a range without events', async () => {
    const usage = stores.usageQuery();
    expect(await usage.summarize({ from: 0, to: 1_000 })).toEqual([totals(0, small)]);
    expect(await usage.summarize({ from: 0, to: 1_000, groupBy: ['key'] })).toEqual([]);
  });

  it('groups by key, with the master key as null', async () => {
    const usage = stores.usageQuery();
    expect(await usage.summarize({ ...range, groupBy: ['key'] })).toEqual([
      { keyId: 'key_a', ...sum(totals(3, small), totals(1, large)) },
      { keyId: 'key_b', ...totals(2, large) },
      { keyId: null, ...totals(1, small) },
    ]);
  });

  it('groups by model group and provider, and by UTC day', async () => {
    const usage = stores.usageQuery();
    expect(await usage.summarize({ ...range, groupBy: ['modelGroup', 'provider'] })).toEqual([
      { modelGroup: 'claude', provider: 'anthropic', ...totals(3, large) },
      { modelGroup: 'gpt', provider: 'openai', ...totals(3, small) },
      { modelGroup: null, provider: null, ...totals(1, small) },
    ]);
    expect(await usage.summarize({ ...range, groupBy: ['day'] })).toEqual([
      { day: '2025-04-01', ...sum(totals(4, small), totals(2, large)) },
      { day: '2025-04-02', ...totals(1, large) },
    ]);
  });

  it('filters by key and groups by day and model group together', async () => {
    const usage = stores.usageQuery();
    expect(await usage.summarize({ ...range, keyId: 'key_a', groupBy: ['day', 'modelGroup'] })).toEqual([
      { day: '2025-04-01', modelGroup: 'gpt', ...totals(3, small) },
      { day: '2025-04-02', modelGroup: 'claude', ...totals(1, large) },
    ]);
    expect(await usage.summarize({ ...range, keyId: 'key_none' })).toEqual([totals(0, small)]);
  });

  it('sums spend per key since a time, with 0 for keys without events', async () => {
    const usage = stores.usageQuery();
    const spend = await usage.spendByKey(['key_a', 'key_b', 'key_none'], day1);
    expect(spend).toEqual(
      new Map([
        ['key_a', 3 * 0.25 + 2],
        ['key_b', 2 * 2 + 0.25],
        ['key_none', 0],
      ]),
    );
    expect(await usage.spendByKey(['key_a'], day2)).toEqual(new Map([['key_a', 2]]));
    expect(await usage.spendByKey([], day1)).toEqual(new Map());
  });
});

function sum(left: UsageTotals, right: UsageTotals): UsageTotals {
  return {
    requests: left.requests + right.requests,
    inputTokens: left.inputTokens + right.inputTokens,
    outputTokens: left.outputTokens + right.outputTokens,
    cachedInputTokens: left.cachedInputTokens + right.cachedInputTokens,
    reasoningTokens: left.reasoningTokens + right.reasoningTokens,
    costUsd: left.costUsd + right.costUsd,
  };
}
