import { and, asc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import type { UsageGrouping, UsageQuery, UsageSummaryRow } from '../usage/usage-query.ts';
import type { ToriiDatabase } from './database.ts';
import { postgresArrayLiteral } from './postgres-array-literal.ts';
import { usageEvents } from './schema.ts';

/**
 * The SQL of each grouping. `day` is written without parameters (`'UTC'` is a literal) so that the `group by` and
 * `select` expressions are the same text, which Postgres requires to match them.
 */
const groupingColumns: Record<UsageGrouping, { field: 'keyId' | 'modelGroup' | 'provider' | 'day'; value: SQL }> = {
  key: { field: 'keyId', value: sql`${usageEvents.keyId}` },
  modelGroup: { field: 'modelGroup', value: sql`${usageEvents.modelGroup}` },
  provider: { field: 'provider', value: sql`${usageEvents.provider}` },
  day: { field: 'day', value: sql`to_char(${usageEvents.startedAt} at time zone 'UTC', 'YYYY-MM-DD')` },
};

// Sums of integer columns are bigint (numeric for sum(bigint)), which drivers return as strings; cast to float8,
// exact below 2^53, so every driver returns a number.
const totals = {
  requests: sql<number>`count(*)::float8`.mapWith(Number),
  inputTokens: sql<number>`coalesce(sum(${usageEvents.inputTokens}), 0)::float8`.mapWith(Number),
  outputTokens: sql<number>`coalesce(sum(${usageEvents.outputTokens}), 0)::float8`.mapWith(Number),
  cachedInputTokens: sql<number>`coalesce(sum(${usageEvents.cachedInputTokens}), 0)::float8`.mapWith(Number),
  reasoningTokens: sql<number>`coalesce(sum(${usageEvents.reasoningTokens}), 0)::float8`.mapWith(Number),
  costUsd: sql<number>`coalesce(sum(${usageEvents.costUsd}), 0)::float8`.mapWith(Number),
};

/**
 * The {@link UsageQuery} over the `usage_events` ledger, for any driver. Range filters use `started_at`, served by
 * the `(key_id, started_at)` and `(started_at)` indexes.
 *
 * @example
 * ```ts
 * const usage = createDrizzleUsageQuery(database.db);
 * const perDay = await usage.summarize({ from: Date.UTC(2025, 0, 1), to: Date.now(), groupBy: ['day', 'modelGroup'] });
 * const spend = await usage.spendByKey(['key_1', 'key_2'], startOfMonth);
 * ```
 */
export function createDrizzleUsageQuery(db: ToriiDatabase): UsageQuery {
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
      const rows =
        values.length > 0 ? await query.groupBy(...values).orderBy(...values.map((value) => asc(value))) : await query;
      return rows as unknown as UsageSummaryRow[];
    },

    // The ids go as one array parameter: reconciling thousands of keys must not hit the protocol's parameter limit.
    async spendByKey(keyIds, since) {
      const spend = new Map<string, number>(keyIds.map((id) => [id, 0]));
      if (keyIds.length === 0) return spend;
      const rows = await db
        .select({ keyId: usageEvents.keyId, costUsd: totals.costUsd })
        .from(usageEvents)
        .where(
          and(
            sql`${usageEvents.keyId} = any(${postgresArrayLiteral([...new Set(keyIds)])}::text[])`,
            gte(usageEvents.startedAt, new Date(since)),
          ),
        )
        .groupBy(usageEvents.keyId);
      for (const row of rows) if (row.keyId !== null) spend.set(row.keyId, row.costUsd);
      return spend;
    },
  };
}
