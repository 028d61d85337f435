import { Hono } from 'hono';
import * as z from 'zod/mini';
import { invalidRequest } from '../errors.ts';
import type { GatewayEnvironment } from '../routes/gateway-context.ts';
import type { UsageGrouping, UsageQuery, UsageSummaryRow } from '../usage/usage-query.ts';
import { firstValidationProblem } from '../validation/zod-issues.ts';
import { requireMaster, type AdminDependencies } from './admin-access.ts';

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
  key_id: z.optional(z.string().check(z.minLength(1), z.maxLength(100))),
});

const dayMs = 86_400_000;
/** The longest range one report may cover. */
const maximumRangeDays = 400;

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
    const to = query.to === undefined ? dependencies.now() : Date.parse(query.to);
    const from = query.from === undefined ? to - 30 * dayMs : Date.parse(query.from);
    if (from >= to) throw invalidRequest('from must be before to.', 'from');
    if (to - from > maximumRangeDays * dayMs)
      throw invalidRequest(`The range may cover at most ${maximumRangeDays} days.`, 'from');
    const groupBy = [...new Set(query.group_by?.split(',') ?? [])].map((name) => groupings[name]!);
    const rows = await dependencies.usage.summarize({
      from,
      to,
      groupBy,
      ...(query.key_id === undefined ? {} : { keyId: query.key_id }),
    });
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
