/**
 * The database schema on SQLite (the embedded default through `node:sqlite`): the same tables, columns, indexes and
 * checks as ./schema.ts, in `drizzle-orm/sqlite-core`, so it is runtime-neutral. Migrations in ./sqlite-migrations are
 * generated from it with `npx drizzle-kit generate --config drizzle-sqlite.config.ts`.
 *
 * SQLite has fewer types, so the columns are stored as: times as integer epoch ms (read back as `Date`, like the
 * Postgres schema's), money and durations as `real`, booleans as integer 0/1, and arrays and `jsonb` as JSON text.
 * The selected rows therefore have the same TypeScript shape as the Postgres schema's.
 */
import { sql } from 'drizzle-orm';
import { check, index, integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core';

const epochMs = (name: string) => integer(name, { mode: 'timestamp_ms' });
const flag = (name: string) => integer(name, { mode: 'boolean' });

/** Virtual keys (see `virtualKeys` in ./schema.ts). */
export const sqliteVirtualKeys = sqliteTable(
  'virtual_keys',
  {
    id: text('id').primaryKey(),
    keyHash: text('key_hash').notNull().unique('virtual_keys_key_hash_unique'),
    keyPrefix: text('key_prefix').notNull(),
    name: text('name').notNull(),
    owner: text('owner'),
    team: text('team'),
    metadata: text('metadata', { mode: 'json' }).$type<Record<string, string>>().notNull().default({}),
    /** A JSON array of names; null: every model group. */
    allowedModelGroups: text('allowed_model_groups', { mode: 'json' }).$type<string[]>(),
    rpmLimit: integer('rpm_limit'),
    tpmLimit: integer('tpm_limit'),
    budgetUsd: real('budget_usd'),
    budgetPeriod: text('budget_period').$type<'day' | 'week' | 'month' | 'total'>(),
    expiresAt: epochMs('expires_at'),
    disabled: flag('disabled').notNull().default(false),
    revokedAt: epochMs('revoked_at'),
    version: integer('version').notNull().default(1),
    createdAt: epochMs('created_at').notNull(),
    updatedAt: epochMs('updated_at').notNull(),
  },
  (table) => [
    index('virtual_keys_created_idx').on(table.createdAt, table.id),
    index('virtual_keys_owner_created_idx').on(table.owner, table.createdAt, table.id),
    index('virtual_keys_team_created_idx').on(table.team, table.createdAt, table.id),
    check(
      'virtual_keys_budget_check',
      sql`(${table.budgetUsd} is null) = (${table.budgetPeriod} is null) and (${table.budgetPeriod} is null or ${table.budgetPeriod} in ('day', 'week', 'month', 'total'))`,
    ),
  ],
);

/** The usage ledger, one row per request, keyed by the request id (see `usageEvents` in ./schema.ts). */
export const sqliteUsageEvents = sqliteTable(
  'usage_events',
  {
    requestId: text('request_id').primaryKey(),
    clientRequestId: text('client_request_id'),
    keyId: text('key_id'),
    modelGroup: text('model_group'),
    provider: text('provider'),
    deployment: text('deployment'),
    upstreamModel: text('upstream_model'),
    operation: text('operation').notNull(),
    clientApi: text('client_api'),
    /** The group whose deployment served: the requested one, or the fallback that did; null in older rows. */
    servedModelGroup: text('served_model_group'),
    /** Upstream attempts of the request, retries and fallbacks included; null in older rows. */
    attempts: integer('attempts'),
    inputTokens: integer('input_tokens').notNull(),
    outputTokens: integer('output_tokens').notNull(),
    cachedInputTokens: integer('cached_input_tokens').notNull(),
    reasoningTokens: integer('reasoning_tokens').notNull(),
    usageSource: text('usage_source').$type<'provider' | 'provider-adjusted' | 'estimate' | 'none'>().notNull(),
    costUsd: real('cost_usd').notNull(),
    status: integer('status').notNull(),
    stream: flag('stream').notNull(),
    latencyMs: real('latency_ms').notNull(),
    timeToFirstTokenMs: real('time_to_first_token_ms'),
    overheadMs: real('overhead_ms').notNull(),
    startedAt: epochMs('started_at').notNull(),
    finishedAt: epochMs('finished_at').notNull(),
  },
  (table) => [
    index('usage_events_key_started_idx').on(table.keyId, table.startedAt),
    index('usage_events_started_idx').on(table.startedAt),
    index('usage_events_client_request_idx')
      .on(table.clientRequestId)
      .where(sql`${table.clientRequestId} is not null`),
  ],
);

/** The Responses API's stored responses (see `storedResponses` in ./schema.ts). */
export const sqliteStoredResponses = sqliteTable(
  'stored_responses',
  {
    id: text('id').primaryKey(),
    keyId: text('key_id'),
    modelGroup: text('model_group').notNull(),
    deploymentId: text('deployment_id').notNull(),
    native: flag('native').notNull(),
    previousResponseId: text('previous_response_id'),
    inputItems: text('input_items', { mode: 'json' }).$type<Record<string, unknown>[]>().notNull(),
    response: text('response', { mode: 'json' }).$type<Record<string, unknown>>(),
    createdAt: epochMs('created_at').notNull(),
    expiresAt: epochMs('expires_at').notNull(),
  },
  (table) => [index('stored_responses_expires_idx').on(table.expiresAt)],
);
