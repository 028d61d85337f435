import { describe, expect, it } from 'vitest';
import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import { costOf, createUnpricedModelNotices, usageCost } from './usage-cost.ts';
import type { ModelPrice } from './price-model.ts';
import { bundledPriceTable } from './price-table.ts';

const gpt4o: ModelPrice = { inputPerMillion: 2.5, cachedInputPerMillion: 1.25, outputPerMillion: 10 };
const sonnet: ModelPrice = {
  inputPerMillion: 3,
  outputPerMillion: 15,
  cachedInputPerMillion: 0.3,
  cacheWriteInputPerMillion: 3.75,
};

function usage(fields: Partial<CanonicalUsage>): CanonicalUsage {
  const inputTokens = fields.inputTokens ?? 0;
  const outputTokens = fields.outputTokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, ...fields };
}

describe('costOf', () => {
  it('prices input and output at their rates', () => {
    expect(costOf(usage({ inputTokens: 1_000_000, outputTokens: 1_000_000 }), gpt4o)).toBeCloseTo(12.5, 12);
    expect(costOf(usage({ inputTokens: 1200, outputTokens: 300 }), gpt4o)).toBeCloseTo(0.006, 12);
  });

  it('prices cached input at the cached rate only, not also at the full rate', () => {
    // 200 uncached * 2.5 + 800 cached * 1.25 + 100 output * 10, per million.
    expect(costOf(usage({ inputTokens: 1000, cachedInputTokens: 800, outputTokens: 100 }), gpt4o)).toBeCloseTo(
      0.0025,
      12,
    );
  });

  it('prices Anthropic cache reads and writes apart from plain input', () => {
    // inputTokens includes both: 1000 plain + 5000 read + 2000 written.
    const cost = costOf(
      usage({ inputTokens: 8000, cachedInputTokens: 5000, cacheWriteInputTokens: 2000, outputTokens: 500 }),
      sonnet,
    );
    expect(cost).toBeCloseTo((1000 * 3 + 5000 * 0.3 + 2000 * 3.75 + 500 * 15) / 1e6, 12);
  });

  it('prices reasoning tokens as output and never on top of it', () => {
    const withReasoning = usage({ inputTokens: 100, outputTokens: 1000, reasoningTokens: 900 });
    expect(costOf(withReasoning, gpt4o)).toBeCloseTo((100 * 2.5 + 1000 * 10) / 1e6, 12);
    expect(costOf(withReasoning, { ...gpt4o, reasoningPerMillion: 20 })).toBeCloseTo(
      (100 * 2.5 + 100 * 10 + 900 * 20) / 1e6,
      12,
    );
  });

  it('falls back to the input rate when a price has no cached or cache-write rate', () => {
    const plain: ModelPrice = { inputPerMillion: 4, outputPerMillion: 8 };
    expect(costOf(usage({ inputTokens: 1000, cachedInputTokens: 600, cacheWriteInputTokens: 100 }), plain)).toBeCloseTo(
      0.004,
      12,
    );
  });

  it('clamps inconsistent counts instead of going negative', () => {
    expect(
      costOf(usage({ inputTokens: 100, cachedInputTokens: 500, outputTokens: 10, reasoningTokens: 50 }), gpt4o),
    ).toBeCloseTo((100 * 1.25 + 10 * 10) / 1e6, 12);
    expect(costOf(usage({ inputTokens: -5, outputTokens: Number.NaN }), gpt4o)).toBe(0);
  });
});

describe('usageCost', () => {
  it('prices a known model through the bundled table', () => {
    const result = usageCost('gpt-4o-2024-08-06', usage({ inputTokens: 1000, outputTokens: 100 }), {
      table: bundledPriceTable,
    });
    expect(result.priced).toBe(true);
    expect(result.match?.matchedName).toBe('gpt-4o-2024-08-06');
    expect(result.costUsd).toBeCloseTo(0.0035, 12);
  });

  it('answers cost 0 and priced false for an unknown model', () => {
    expect(usageCost('mystery-model', usage({ inputTokens: 1000, outputTokens: 100 }))).toEqual({
      costUsd: 0,
      priced: false,
      match: undefined,
    });
  });

  it('uses a deployment override', () => {
    const result = usageCost('mystery-model', usage({ inputTokens: 1_000_000 }), {
      override: { inputPerMillion: 7, outputPerMillion: 9 },
    });
    expect(result).toMatchObject({ costUsd: 7, priced: true });
  });
});

describe('createUnpricedModelNotices', () => {
  it('reports each model once and stays bounded', () => {
    const notices = createUnpricedModelNotices(2);
    expect(notices.isFirst('a')).toBe(true);
    expect(notices.isFirst('a')).toBe(false);
    expect(notices.isFirst('b')).toBe(true);
    expect(notices.isFirst('c')).toBe(true);
    // The set was forgotten past two names, so 'a' is reported again rather than memory growing.
    expect(notices.isFirst('a')).toBe(true);
  });
});
