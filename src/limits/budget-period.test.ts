import { describe, expect, it } from 'vitest';
import { budgetExceededError } from './budget-error.ts';
import { budgetCounterTtlSeconds, budgetPeriodWindow } from './budget-period.ts';

const at = (iso: string) => Date.parse(iso);

describe('budgetPeriodWindow', () => {
  it.each([
    ['day', '2025-06-15T23:59:59.999Z', '2025-06-15T00:00:00.000Z', '2025-06-16T00:00:00.000Z'],
    ['day', '2025-06-16T00:00:00.000Z', '2025-06-16T00:00:00.000Z', '2025-06-17T00:00:00.000Z'],
    // 2025-06-15 is a Sunday: its ISO week began on Monday the 9th.
    ['week', '2025-06-15T12:00:00.000Z', '2025-06-09T00:00:00.000Z', '2025-06-16T00:00:00.000Z'],
    ['week', '2025-06-16T00:00:00.000Z', '2025-06-16T00:00:00.000Z', '2025-06-23T00:00:00.000Z'],
    ['week', '2026-01-01T08:00:00.000Z', '2025-12-29T00:00:00.000Z', '2026-01-05T00:00:00.000Z'],
    ['month', '2024-02-29T23:00:00.000Z', '2024-02-01T00:00:00.000Z', '2024-03-01T00:00:00.000Z'],
    ['month', '2025-12-31T23:59:59.000Z', '2025-12-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'],
  ] as const)('puts a %s budget at %s in [%s, %s)', (period, instant, start, end) => {
    const window = budgetPeriodWindow(period, at(instant));
    expect(new Date(window.start).toISOString()).toBe(start);
    expect(new Date(window.end ?? 0).toISOString()).toBe(end);
    expect(window.label).toBe(start.slice(0, 10));
  });

  it('has one endless window for total budgets', () => {
    expect(budgetPeriodWindow('total', at('2025-06-15T12:00:00Z'))).toEqual({
      period: 'total',
      start: 0,
      end: null,
      label: 'total',
    });
  });

  it('keeps counters until a day after the period ends, at least 60 s', () => {
    const now = at('2025-06-15T23:00:00Z');
    expect(budgetCounterTtlSeconds(budgetPeriodWindow('day', now), now)).toBe(3600 + 86_400);
    expect(budgetCounterTtlSeconds(budgetPeriodWindow('total', now), now)).toBe(90 * 86_400);
    const window = budgetPeriodWindow('day', now);
    expect(budgetCounterTtlSeconds(window, (window.end ?? 0) + 10 * 86_400_000)).toBe(60);
  });
});

describe('budgetExceededError', () => {
  it('is a 429 insufficient_quota naming the budget, the period and the reset', () => {
    const now = at('2025-06-15T12:00:00Z');
    const error = budgetExceededError({ amountUsd: 10, period: 'month' }, 10.234, budgetPeriodWindow('month', now));
    expect(error).toMatchObject({ status: 429, type: 'insufficient_quota', code: 'budget_exceeded' });
    expect(error.message).toBe(
      'This API key has exceeded its budget: spent $10.23 of the $10.00 monthly budget. It resets at 2025-07-01T00:00:00Z.',
    );
    expect(error.headers).toEqual({ 'x-should-retry': 'false' });
  });

  it('says a total budget does not reset', () => {
    const error = budgetExceededError({ amountUsd: 5, period: 'total' }, 5, budgetPeriodWindow('total', 0));
    expect(error.message).toBe(
      'This API key has exceeded its budget: spent $5.00 of the $5.00 total budget. The budget does not reset; ask an administrator to raise it.',
    );
  });
});
