import { and, asc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import type { UsageGrouping, UsageQuery, UsageSummaryRow } from '../usage/usage-query.ts';
import type { ToriiSqliteDatabase } from './sqlite-database.ts';
import { sqliteUsageEvents as usageEvents } from './sqlite-schema.ts';

/**
 * The SQL of each grouping. `day` is the UTC date of `started_at` (epoch ms; divided by 1000.0, not 1000, so times
 * before 1970 fall on their own day).
 */
const groupingColumns: Record<UsageGrouping, { field: 'keyId' | 'modelGroup' | 'provider' | 'day'; value: SQL }> = {
  key: { field: 'keyId', value: sql`${usageEvents.keyId}` },
  modelGroup: { field: 'modelGroup', value: sql`${usageEvents.modelGroup}` },
  provider: { field: 'provider', value: sql`${usageEvents.provider}` },
  day: { field: 'day', value: sql`strftime('%Y-%m-%d', ${usageEvents.startedAt} / 1000.0, 'unixepoch')` },
};

// SQLite's `sum` of integers is an integer (exact up to 2^63), of reals a real; both arrive as numbers.
const totals = {
  requests: sql<number>`count(*)`.mapWith(Number),
  inputTokens: sql<number>`coalesce(sum(${usageEvents.inputTokens}), 0)`.mapWith(Number),
  outputTokens: sql<number>`coalesce(sum(${usageEvents.outputTokens}), 0)`.mapWith(Number),
  cachedInputTokens: sql<number>`coalesce(sum(${usageEvents.cachedInputTokens}), 0)`.mapWith(Number),
  reasoningTokens: sql<number>`coalesce(sum(${usageEvents.reasoningTokens}), 0)`.mapWith(Number),
  costUsd: sql<number>`coalesce(sum(${usageEvents.costUsd}), 0)`.mapWith(Number),
};

/**
 * The {@link UsageQuery} over the embedded SQLite database's `usage_events` ledger, answering what the Postgres one
 * does (src/db/drizzle-usage-query.ts). Range filters use `started_at` (epoch ms), served by the `(key_id,
 * started_at)` and `(started_at)` indexes; `spendByKey` sends its ids as one JSON array parameter, so reconciling
 * thousands of keys stays within SQLite's bound-parameter limit.
 *
 * @example
 * ```ts
 * const usage = createSqliteUsageQuery(database.db);
 * const perDay = await usage.summarize({ from: Date.UTC(2025, 0, 1), to: Date.now(), groupBy: ['day', 'modelGroup'] });
 * const spend = await usage.spendByKey(['key_1', 'key_2'], startOfMonth);
 * ```
 */
export function createSqliteUsageQuery(db: ToriiSqliteDatabase): UsageQuery {
  return {
    async summarize({ from, to, keyId, groupBy = [] }) {
      const groupings = [...new Set(groupBy)].map((grouping) => {
        const column = groupingColumns[grouping];
        if (!column) throw new RangeError(`unknown usage grouping "${String(grouping)}"`);
        return column;
      });
      const conditions = [gte(usageEvents.startedAt, new Date(from)), lt(usageEvents.startedAt, new Date(to))];
      if (keyId !== undefined) conditions.push(eq(usageEvents.keyId, keyId));
      const selection: Record<string, SQL.Aliased | SQL> = { ...totals };
      for (const grouping of groupings) selection[grouping.field] = grouping.value;
      const values = groupings.map((grouping) => grouping.value);
      const query = db
        .select(selection)
        .from(usageEvents)
        .where(and(...conditions))
        .$dynamic();
      // Postgres sorts nulls last in ascending order, SQLite first: order as Postgres does.
      const order = values.flatMap((value) => [sql`${value} is null`, asc(value)]);
      const rows = values.length > 0 ? await query.groupBy(...values).orderBy(...order) : await query;
      return rows as unknown as UsageSummaryRow[];
    },

    async spendByKey(keyIds, since) {
      const spend = new Map<string, number>(keyIds.map((id) => [id, 0]));
      if (keyIds.length === 0) return spend;
      const rows = await db
        .select({ keyId: usageEvents.keyId, costUsd: totals.costUsd })
        .from(usageEvents)
        .where(
          and(
            sql`${usageEvents.keyId} in (select value from json_each(${JSON.stringify([...new Set(keyIds)])}))`,
            gte(usageEvents.startedAt, new Date(since)),
          ),
        )
        .groupBy(usageEvents.keyId);
      for (const row of rows) if (row.keyId !== null) spend.set(row.keyId, row.costUsd);
      return spend;
    },
  };
}
