import { Hono } from 'hono';
import * as z from 'zod/mini';
import { GatewayError, invalidRequest, isGatewayError } from '../errors.ts';
import type { GatewayEnvironment } from '../gateway-environment.ts';
import type { UsageGrouping, UsageQuery, UsageSummaryRow } from '../usage/usage-query.ts';
import { firstValidationProblem } from '../validation/zod-issues.ts';
import { requireMaster, type AdminDependencies } from './admin-access.ts';
import { adminLabel } from './admin-text.ts';

const groupings: Record<string, UsageGrouping> = {
  key: 'key',
  model_group: 'modelGroup',
  provider: 'provider',
  day: 'day',
};

const usageQuerySchema = z.strictObject({
  from: z.optional(z.iso.datetime({ offset: true })),
  to: z.optional(z.iso.datetime({ offset: true })),
  group_by: z.optional(
    z
      .string()
      .check(
        z.regex(
          /^(?:key|model_group|provider|day)(?:,(?:key|model_group|provider|day))*$/,
          'a comma-separated list of key, model_group, provider, day',
        ),
      ),
  ),
  key_id: z.optional(adminLabel(100)),
});

const dayMs = 86_400_000;
/** The longest range one report may cover. */
const maximumRangeDays = 400;
/** The range `from` and `to` must lie in: nothing is older than the epoch, and later years have no ISO form. */
const earliestTime = Date.UTC(1970, 0, 1);
const latestTime = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Epoch ms of a validated ISO time, or a 400 naming `param` when it lies outside 1970 to 9999. */
function timeOf(value: string, param: 'from' | 'to'): number {
  const time = Date.parse(value);
  if (!(time >= earliestTime && time <= latestTime))
    throw invalidRequest(`${param} must be a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z.`, param);
  return time;
}

/** The 503 when the ledger cannot be read (the database is unreachable). */
function ledgerUnavailable(cause: unknown): GatewayError {
  return new GatewayError({
    status: 503,
    type: 'api_error',
    code: 'usage_ledger_unavailable',
    retryable: true,
    cause,
    message: 'The usage ledger (the database) could not be read right now. Try again shortly.',
  });
}

function rowJson(row: UsageSummaryRow): Record<string, unknown> {
  return {
    ...('keyId' in row ? { key_id: row.keyId } : {}),
    ...('modelGroup' in row ? { model_group: row.modelGroup } : {}),
    ...('provider' in row ? { provider: row.provider } : {}),
    ...('day' in row ? { day: row.day } : {}),
    requests: row.requests,
    input_tokens: row.inputTokens,
    output_tokens: row.outputTokens,
    cached_input_tokens: row.cachedInputTokens,
    reasoning_tokens: row.reasoningTokens,
    cost_usd: row.costUsd,
  };
}

/**
 * `GET /admin/usage`, master key only: usage and spend from the ledger over `[from, to)` (ISO 8601; default the
 * last 30 days), grouped by any of `key`, `model_group`, `provider`, `day` (UTC), optionally for one `key_id`.
 * The ledger is written in batches, so the last second or so of traffic may not be in it yet.
 *
 * @example
 * app.route('/admin', createAdminUsageRoutes({ usage, modelGroups, authenticator, bodyLimitBytes, now: Date.now }));
 */
export function createAdminUsageRoutes(dependencies: AdminDependencies & { usage: UsageQuery }) {
  const app = new Hono<GatewayEnvironment>();
  app.get('/usage', async (c) => {
    c.var.record.operation = 'admin';
    await requireMaster(dependencies, c.req.raw);
    const parsed = usageQuerySchema.safeParse(c.req.query());
    if (!parsed.success) {
      const problem = firstValidationProblem(parsed.error.issues);
      throw invalidRequest(problem.message, problem.param);
    }
    const query = parsed.data;
    const explicitFrom = query.from === undefined ? undefined : timeOf(query.from, 'from');
    const to = query.to === undefined ? dependencies.now() : timeOf(query.to, 'to');
    const from = explicitFrom ?? to - 30 * dayMs;
    if (from >= to) throw invalidRequest('from must be before to.', 'from');
    if (to - from > maximumRangeDays * dayMs)
      throw invalidRequest(`The range may cover at most ${maximumRangeDays} days.`, 'from');
    const groupBy = [...new Set(query.group_by?.split(',') ?? [])].map((name) => groupings[name]!);
    let rows: UsageSummaryRow[];
    try {
      rows = await dependencies.usage.summarize({
        from,
        to,
        groupBy,
        ...(query.key_id === undefined ? {} : { keyId: query.key_id }),
      });
    } catch (error) {
      throw isGatewayError(error) ? error : ledgerUnavailable(error);
    }
    return c.json({
      object: 'usage_report',
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      group_by: query.group_by?.split(',') ?? [],
      ...(query.key_id === undefined ? {} : { key_id: query.key_id }),
      data: rows.map(rowJson),
    });
  });
  return app;
}
