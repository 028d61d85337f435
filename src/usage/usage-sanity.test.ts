import { describe, expect, it } from 'vitest';
import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import type { GatewayLogger } from '../services.ts';
import { costOf } from './usage-cost.ts';
import { createUsageSanity, defaultMaxUsageTokens, sanitiseUsage } from './usage-sanity.ts';

const cap = 1_000;
const sane: CanonicalUsage = {
  inputTokens: 100,
  outputTokens: 20,
  totalTokens: 120,
  cachedInputTokens: 40,
  cacheWriteInputTokens: 10,
  reasoningTokens: 5,
};

/** A logger keeping each line with its fields. */
function fieldLogger() {
  const lines: { level: string; message: string; fields: Record<string, unknown> | undefined }[] = [];
  const logger: GatewayLogger = {
    info: (message, fields) => lines.push({ level: 'info', message, fields }),
    warn: (message, fields) => lines.push({ level: 'warn', message, fields }),
    error: (message, fields) => lines.push({ level: 'error', message, fields }),
  };
  return { logger, lines };
}

// Defect (issue 8, item 13): usage from the upstream was trusted blindly; absurd token counts stored
// cost_usd = 1e297, which would poison a budget.
describe('sanitiseUsage', () => {
  it('leaves sane usage alone, without allocating anything (undefined means "use it as it is")', () => {
    expect(sanitiseUsage(sane, cap)).toBeUndefined();
    expect(sanitiseUsage({ inputTokens: 0, outputTokens: 0, totalTokens: 0 }, cap)).toBeUndefined();
    expect(sanitiseUsage({ inputTokens: cap, outputTokens: 0, totalTokens: cap }, cap)).toBeUndefined();
  });

  it('clamps absurdly large counts to the cap, and the total to the sum of the parts', () => {
    const adjustment = sanitiseUsage({ inputTokens: 1e300, outputTokens: 1e300, totalTokens: 1e300 }, cap);
    expect(adjustment?.usage).toEqual({ inputTokens: cap, outputTokens: cap, totalTokens: 2 * cap });
    expect(adjustment?.problems).toEqual([
      'inputTokens 1e+300 is above the cap of 1000',
      'outputTokens 1e+300 is above the cap of 1000',
      'totalTokens 1e+300 is above the cap of 1000',
      'totalTokens 1000 is not inputTokens + outputTokens (2000)',
    ]);
  });

  it.each<[string, unknown, number]>([
    ['NaN', Number.NaN, 0],
    ['Infinity', Number.POSITIVE_INFINITY, cap],
    ['-Infinity', Number.NEGATIVE_INFINITY, 0],
    ['a negative count', -5, 0],
    ['a fraction', 12.6, 13],
    ['a string', '12', 0],
    ['null', null, 0],
  ])('turns %s into a whole count within bounds', (_case, value, expected) => {
    const usage = { inputTokens: value, outputTokens: 0, totalTokens: expected } as unknown as CanonicalUsage;
    const adjustment = sanitiseUsage(usage, cap);
    expect(adjustment?.usage.inputTokens).toBe(expected);
    expect(adjustment?.problems).toHaveLength(1);
  });

  it('keeps the parts within their wholes: cached and cache-write within input, reasoning within output', () => {
    const adjustment = sanitiseUsage(
      {
        inputTokens: 100,
        outputTokens: 10,
        totalTokens: 110,
        cachedInputTokens: 150,
        cacheWriteInputTokens: 30,
        reasoningTokens: 11,
      },
      cap,
    );
    expect(adjustment?.usage).toEqual({
      inputTokens: 100,
      outputTokens: 10,
      totalTokens: 110,
      cachedInputTokens: 100,
      cacheWriteInputTokens: 0,
      reasoningTokens: 10,
    });
    expect(adjustment?.problems).toEqual([
      'cachedInputTokens 150 is more than inputTokens (100)',
      'cacheWriteInputTokens 30 is more than inputTokens less cachedInputTokens (0)',
      'reasoningTokens 11 is more than outputTokens (10)',
    ]);
  });

  it('keeps the raw usage beside the clamped counts, and leaves absent optional counts absent', () => {
    const raw = { prompt_tokens: -1 };
    const adjustment = sanitiseUsage({ inputTokens: -1, outputTokens: 3, totalTokens: 2, raw }, cap);
    expect(adjustment?.usage).toEqual({ inputTokens: 0, outputTokens: 3, totalTokens: 3, raw });
  });

  it('bounds the cost of whatever an upstream reports', () => {
    const price = { inputPerMillion: 15, outputPerMillion: 75 };
    const absurd = { inputTokens: 1e300, outputTokens: 1e300, totalTokens: 1e300, reasoningTokens: 1e300 };
    expect(costOf(absurd, price)).toBeGreaterThan(1e290);
    const clamped = sanitiseUsage(absurd, defaultMaxUsageTokens)!.usage;
    const cost = costOf(clamped, price);
    expect(Number.isFinite(cost)).toBe(true);
    expect(cost).toBe((10_000_000 * 15 + 10_000_000 * 75) / 1_000_000);
  });

  it('defaults the cap to 10,000,000 tokens per field', () => {
    expect(defaultMaxUsageTokens).toBe(10_000_000);
  });
});

describe('createUsageSanity', () => {
  const context = { requestId: 'req_1', provider: 'openai', deployment: 'fast/0', upstreamModel: 'gpt-4o' };

  it('logs each adjustment at warn with the provider, the deployment and the raw numbers', () => {
    const { logger, lines } = fieldLogger();
    const sanity = createUsageSanity({ maxTokens: cap, logger, now: () => 0 });
    expect(sanity.check(sane, context)).toBeUndefined();
    expect(lines).toEqual([]);
    const adjustment = sanity.check({ inputTokens: Number.NaN, outputTokens: 1e300, totalTokens: 5 }, context);
    expect(adjustment?.usage).toEqual({ inputTokens: 0, outputTokens: cap, totalTokens: cap });
    expect(lines).toEqual([
      {
        level: 'warn',
        message: 'Upstream usage out of bounds; clamped before accounting',
        fields: {
          requestId: 'req_1',
          provider: 'openai',
          deployment: 'fast/0',
          upstreamModel: 'gpt-4o',
          reported: { inputTokens: 'NaN', outputTokens: 1e300, totalTokens: 5 },
          recorded: { inputTokens: 0, outputTokens: cap, totalTokens: cap },
          problems: [
            'inputTokens NaN is not a finite number',
            'outputTokens 1e+300 is above the cap of 1000',
            'totalTokens 5 is not inputTokens + outputTokens (1000)',
          ],
          suppressedWarnings: 0,
        },
      },
    ]);
  });

  it('logs at most warningsPerMinute lines a minute, and says how many it left out', () => {
    const { logger, lines } = fieldLogger();
    let time = 0;
    const sanity = createUsageSanity({ maxTokens: cap, logger, now: () => time, warningsPerMinute: 3 });
    const absurd = { inputTokens: 1e300, outputTokens: 0, totalTokens: 1e300 };
    for (let index = 0; index < 1_000; index++) expect(sanity.check(absurd, context)).toBeDefined();
    expect(lines).toHaveLength(3);
    time += 60_000;
    sanity.check(absurd, context);
    expect(lines).toHaveLength(4);
    expect(lines[3]?.fields?.suppressedWarnings).toBe(997);
    sanity.check(absurd, context);
    expect(lines[4]?.fields?.suppressedWarnings).toBe(0);
  });
});
