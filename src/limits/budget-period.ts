import type { BudgetPeriod } from '../auth/virtual-key-record.ts';

/** One concrete budget period: the UTC calendar day, ISO week (Monday first) or month that holds an instant. */
export interface BudgetPeriodWindow {
  period: BudgetPeriod;
  /** Epoch ms of the period's start (0 for `total`). */
  start: number;
  /** Epoch ms of the next period's start; null for `total`. */
  end: number | null;
  /** The start as `YYYY-MM-DD` (UTC), or `total`: the period part of the shared counter's key. */
  label: string;
}

const dayMs = 86_400_000;

/**
 * The budget period holding the instant `now` (epoch ms), in UTC calendar terms: a day starts at 00:00 UTC, a week on
 * Monday 00:00 UTC, a month on its first day; `total` started at the epoch and never ends.
 */
export function budgetPeriodWindow(period: BudgetPeriod, now: number): BudgetPeriodWindow {
  if (period === 'total') return { period, start: 0, end: null, label: 'total' };
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  const day = Date.UTC(year, month, date.getUTCDate());
  let start: number;
  let end: number;
  if (period === 'day') {
    start = day;
    end = day + dayMs;
  } else if (period === 'week') {
    start = day - ((date.getUTCDay() + 6) % 7) * dayMs;
    end = start + 7 * dayMs;
  } else {
    start = Date.UTC(year, month, 1);
    end = Date.UTC(year, month + 1, 1);
  }
  return { period, start, end, label: new Date(start).toISOString().slice(0, 10) };
}

/**
 * How long a period's shared counters should live, in seconds: until a day after the period ends (late pushes land
 * harmlessly), at least 60 (Workers KV's minimum). `total` counters live 90 days past their last write; the ledger
 * reconciliation restores them if they expire.
 */
export function budgetCounterTtlSeconds(window: BudgetPeriodWindow, now: number): number {
  if (window.end === null) return 90 * 86_400;
  return Math.max(60, Math.ceil((window.end - now) / 1000) + 86_400);
}
