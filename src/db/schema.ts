/**
 * The database schema: one file for every driver (postgres-js, PGlite, Hyperdrive). Only `drizzle-orm/pg-core`, so
 * it is runtime-neutral. Migrations in ./migrations are generated from it with `npx drizzle-kit generate`.
 *
 * Times are `timestamptz` (the records carry epoch ms; the stores convert); money is `double precision` US dollars.
 */
import { sql } from 'drizzle-orm';
import { boolean, check, doublePrecision, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

const timestampWithZone = (name: string) => timestamp(name, { withTimezone: true, precision: 3, mode: 'date' });

/**
 * Virtual keys: the source of truth behind the key caches. Only the SHA-256 of the secret is stored. Keys are never
 * deleted (revoked instead), so the usage ledger's `key_id` always names a row here.
 */
export const virtualKeys = pgTable(
  'virtual_keys',
  {
    id: text('id').primaryKey(),
    keyHash: text('key_hash').notNull().unique('virtual_keys_key_hash_unique'),
    keyPrefix: text('key_prefix').notNull(),
    name: text('name').notNull(),
    owner: text('owner'),
    team: text('team'),
    metadata: jsonb('metadata').$type<Record<string, string>>().notNull().default({}),
    /** null: every model group. */
    allowedModelGroups: text('allowed_model_groups').array(),
    rpmLimit: integer('rpm_limit'),
    tpmLimit: integer('tpm_limit'),
    budgetUsd: doublePrecision('budget_usd'),
    budgetPeriod: text('budget_period').$type<'day' | 'week' | 'month' | 'total'>(),
    expiresAt: timestampWithZone('expires_at'),
    disabled: boolean('disabled').notNull().default(false),
    revokedAt: timestampWithZone('revoked_at'),
    version: integer('version').notNull().default(1),
    createdAt: timestampWithZone('created_at').notNull(),
    updatedAt: timestampWithZone('updated_at').notNull(),
  },
  (table) => [
    // Listing newest first with a (created_at, id) cursor, overall and per owner or team. Ascending on purpose: a
    // backward scan serves `order by created_at desc, id desc` (a `desc nulls last` index would not match it).
    index('virtual_keys_created_idx').on(table.createdAt, table.id),
    index('virtual_keys_owner_created_idx').on(table.owner, table.createdAt, table.id),
    index('virtual_keys_team_created_idx').on(table.team, table.createdAt, table.id),
    check(
      'virtual_keys_budget_check',
      sql`(${table.budgetUsd} is null) = (${table.budgetPeriod} is null) and (${table.budgetPeriod} is null or ${table.budgetPeriod} in ('day', 'week', 'month', 'total'))`,
    ),
  ],
);

/**
 * The usage ledger: one row per request, keyed by the request id so a retried batch never double-counts. No foreign
 * key to `virtual_keys`: the master key's rows have a null `key_id`, and a batch must never fail on one row.
 */
export const usageEvents = pgTable(
  'usage_events',
  {
    /** Made by the gateway, unique per request: the idempotency key of ledger writes. */
    requestId: text('request_id').primaryKey(),
    /** The client's own `x-request-id`, for correlation; clients choose it, so it is neither unique nor trusted. */
    clientRequestId: text('client_request_id'),
    keyId: text('key_id'),
    modelGroup: text('model_group'),
    provider: text('provider'),
    deployment: text('deployment'),
    upstreamModel: text('upstream_model'),
    operation: text('operation').notNull(),
    /** The client API the request came in (`openai-chat`, `anthropic-messages` ...); null in rows of older versions. */
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
    costUsd: doublePrecision('cost_usd').notNull(),
    status: integer('status').notNull(),
    stream: boolean('stream').notNull(),
    /** Durations are fractional milliseconds (from a monotonic clock). */
    latencyMs: doublePrecision('latency_ms').notNull(),
    timeToFirstTokenMs: doublePrecision('time_to_first_token_ms'),
    overheadMs: doublePrecision('overhead_ms').notNull(),
    startedAt: timestampWithZone('started_at').notNull(),
    finishedAt: timestampWithZone('finished_at').notNull(),
  },
  (table) => [
    // Spend and usage of one key over a time range (budget reconciliation, per-key reports).
    index('usage_events_key_started_idx').on(table.keyId, table.startedAt),
    // Reports over a time range across keys.
    index('usage_events_started_idx').on(table.startedAt),
    // Finding a request by the id its client sent (the admin API); most requests send none.
    index('usage_events_client_request_idx')
      .on(table.clientRequestId)
      .where(sql`${table.clientRequestId} is not null`),
  ],
);

/**
 * The Responses API's stored responses (src/responses/response-store.ts): for a translated response, its input items
 * and the whole Response object, so a conversation continues (`previous_response_id`) on any instance; for a native
 * one, only which deployment served it (`native`, no items). Rows past `expires_at` are treated as absent and deleted
 * lazily by the store. No foreign keys: `previous_response_id` may name a response that expired or was deleted, and
 * the master key's rows have a null `key_id`.
 */
export const storedResponses = pgTable(
  'stored_responses',
  {
    /** The id the client saw (`resp_…`). */
    id: text('id').primaryKey(),
    keyId: text('key_id'),
    modelGroup: text('model_group').notNull(),
    deploymentId: text('deployment_id').notNull(),
    native: boolean('native').notNull(),
    previousResponseId: text('previous_response_id'),
    inputItems: jsonb('input_items').$type<Record<string, unknown>[]>().notNull(),
    response: jsonb('response').$type<Record<string, unknown>>(),
    createdAt: timestampWithZone('created_at').notNull(),
    expiresAt: timestampWithZone('expires_at').notNull(),
  },
  (table) => [
    // The lazy sweep of expired rows (oldest first).
    index('stored_responses_expires_idx').on(table.expiresAt),
  ],
);
