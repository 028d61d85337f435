import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../e2e/accounting-harness.ts';
import type { RunningGateway } from '../e2e/gateway-process.ts';
import { nodeClusterRuntime } from '../e2e/gateway-starters.ts';
import { createEmptyTestDatabase } from '../services/test-database.ts';
import { chaosMasterKey } from './chaos-client.ts';
import { hostileEnvironment, startHostileUpstream, type HostileUpstream } from './hostile-upstream.ts';

/** $1 per million tokens in and out: once clamped to 10M tokens a field, one request costs $20 at most. */
const pricing = { input: 1, output: 1 };
const budgetUsd = 1_000;

interface LedgerRow {
  request_id: string;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  reasoning_tokens: number;
  usage_source: string;
  cost_usd: number;
}

// Defect (issue 8, item 13): an upstream reporting 1e300 tokens stored cost_usd = 1e297 in the ledger and would
// have poisoned the key's budget. Through the built Node server (cluster of 2) with a Postgres ledger: the stored
// rows are clamped, their cost finite and small, and the key's budget still serves.
describe('absurd usage from the upstream, through the Node server and its Postgres ledger', () => {
  let upstream: HostileUpstream;
  let database: { url: string; drop(): Promise<void> };
  let gateway: RunningGateway;

  beforeAll(async () => {
    upstream = await startHostileUpstream();
    database = await createEmptyTestDatabase();
    const group = (provider: string, model: string) => ({
      deployments: [{ provider, model, baseURL: `${upstream.url}/v1`, apiKey: '${HOSTILE_KEY}', pricing }],
    });
    gateway = await nodeClusterRuntime.start(
      {
        modelGroups: {
          'openai/absurd-usage': group('openai', 'absurd-usage'),
          'anthropic/absurd-usage': group('anthropic', 'absurd-usage'),
          'openai/text': group('openai', 'text'),
        },
      },
      { ...hostileEnvironment, TORII_MASTER_KEY: chaosMasterKey, DATABASE_URL: database.url, REDIS_URL: '' },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
    await database?.drop();
  });

  it('stores clamped counts and a finite, bounded cost, and the budget keeps serving', async () => {
    const created = await fetch(`${gateway.baseURL}/admin/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${chaosMasterKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'absurd-usage', budget: { amount_usd: budgetUsd, period: 'total' } }),
    });
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: string };
    const chat = async (model: string, stream: boolean, requestId: string): Promise<number> => {
      const response = await fetch(`${gateway.baseURL}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': requestId },
        body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
      });
      await response.text();
      return response.status;
    };

    const prefix = `absurd-${crypto.randomUUID()}`;
    const requestIds: string[] = [];
    for (const model of ['openai/absurd-usage', 'anthropic/absurd-usage'])
      for (const stream of [false, true]) {
        const requestId = `${prefix}-${model.replace('/', '-')}-${stream}`;
        requestIds.push(requestId);
        expect(await chat(model, stream, requestId)).toBe(200);
      }

    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      let rows: LedgerRow[] = [];
      await waitFor(
        'the four ledger rows',
        async () => {
          rows = await sql<LedgerRow[]>`
            select client_request_id as request_id, input_tokens, output_tokens, cached_input_tokens, reasoning_tokens, usage_source,
                   cost_usd
            from usage_events where starts_with(client_request_id, ${prefix})`;
          return rows.length === requestIds.length;
        },
        30_000,
      );
      for (const row of rows) {
        expect(row.usage_source, row.request_id).toBe('provider-adjusted');
        for (const count of [row.input_tokens, row.output_tokens, row.cached_input_tokens, row.reasoning_tokens])
          expect(count, row.request_id).toBeLessThanOrEqual(10_000_000);
        expect(Number.isFinite(row.cost_usd), row.request_id).toBe(true);
        expect(row.cost_usd, row.request_id).toBeGreaterThan(0);
        expect(row.cost_usd, row.request_id).toBeLessThanOrEqual(20);
      }
    } finally {
      await sql.end({ timeout: 5 });
    }

    // The four requests cost at most $80 of the $1,000 budget: the key is served, where 1e297 would have refused it.
    expect(await chat('openai/text', false, `${prefix}-after`)).toBe(200);
  });
});
