/** What usage totals can be grouped by. `day` is the UTC calendar day of the request's start. */
export type UsageGrouping = 'key' | 'modelGroup' | 'provider' | 'day';

/** Sums over a set of usage events. Tokens are counts; cost is US dollars. */
export interface UsageTotals {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  reasoningTokens: number;
  costUsd: number;
}

/**
 * One group of a usage summary: the totals, and the value of each grouping asked for (fields of groupings not asked
 * for are absent). `keyId`, `modelGroup` and `provider` are null for events without one (the master key, requests
 * that failed before routing); `day` is `YYYY-MM-DD` in UTC.
 */
export interface UsageSummaryRow extends UsageTotals {
  keyId?: string | null;
  modelGroup?: string | null;
  provider?: string | null;
  day?: string;
}

/** Which events a summary covers and how it groups them. */
export interface UsageSummaryOptions {
  /** Start of the range, epoch ms, inclusive (compared with the events' `startedAt`). */
  from: number;
  /** End of the range, epoch ms, exclusive. */
  to: number;
  /** Only this key's events. */
  keyId?: string;
  /** Group by these, in this order; empty or absent: one row of totals (zeros when no events match). */
  groupBy?: readonly UsageGrouping[];
}

/**
 * Reads the usage ledger (Postgres through Drizzle). Used by the admin API's reports and to reconcile the budget
 * counters kept in the shared cache; never on the request path.
 */
export interface UsageQuery {
  /** Totals of the events started in [from, to), grouped as asked; rows ordered by the groupings, ascending. */
  summarize(options: UsageSummaryOptions): Promise<UsageSummaryRow[]>;
  /**
   * Spend in US dollars of each key over events started at or after `since` (epoch ms). Every id asked for is in the
   * map, with 0 when it has no events.
   */
  spendByKey(keyIds: readonly string[], since: number): Promise<Map<string, number>>;
}
