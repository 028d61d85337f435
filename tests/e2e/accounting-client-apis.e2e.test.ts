import Anthropic from '@anthropic-ai/sdk';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { createEmptyTestDatabase } from '../services/test-database.ts';
import type { RunningGateway } from './gateway-process.ts';
import {
  createVirtualKey,
  newConnectionFetch,
  openaiClient,
  pricedRequestCostUsd,
  requiredServiceUrl,
  startAccountingGateway,
  waitFor,
} from './accounting-harness.ts';

interface LedgerRow {
  client_api: string | null;
  operation: string;
  model_group: string;
  status: number;
  stream: boolean;
  input_tokens: number;
  output_tokens: number;
  usage_source: string;
}

function anthropicClient(gateway: RunningGateway, apiKey: string): Anthropic {
  return new Anthropic({
    baseURL: gateway.baseURL,
    apiKey,
    maxRetries: 0,
    timeout: 20_000,
    fetch: newConnectionFetch(),
  });
}

const hello = [{ role: 'user' as const, content: 'hello' }];

// Issue 9, "for every client API": keys, allow-lists, rate limits, budgets and the ledger behave the same whichever
// API the client speaks; each refusal comes in the client's own envelope, and the ledger records the client API.
describe('accounting across client APIs (cluster of 2, Postgres)', { timeout: 120_000 }, () => {
  let mock: MockUpstream;
  let database: { url: string; drop(): Promise<void> };
  let sql: postgres.Sql;
  let gateway: RunningGateway;

  const rowsOf = async (keyId: string): Promise<LedgerRow[]> =>
    await sql<LedgerRow[]>`select client_api, operation, model_group, status, stream, input_tokens, output_tokens,
      usage_source from usage_events where key_id = ${keyId} order by started_at`;

  beforeAll(async () => {
    requiredServiceUrl('TORII_TEST_DATABASE_URL');
    mock = await startMockUpstream();
    database = await createEmptyTestDatabase();
    sql = postgres(database.url, { max: 1, onnotice: () => {} });
    gateway = await startAccountingGateway({ mockUrl: mock.url, databaseUrl: database.url });
  });

  afterAll(async () => {
    await gateway?.stop();
    await sql?.end({ timeout: 5 });
    await mock?.close();
    await database?.drop();
  });

  it('records the client API of every request, passed through or translated, streamed or not', async () => {
    const issued = await createVirtualKey(gateway, { name: 'apis' });
    const anthropic = anthropicClient(gateway, issued.key);
    await anthropic.messages.create({ model: 'claude-text', max_tokens: 16, messages: hello });
    await anthropic.messages.stream({ model: 'claude-text', max_tokens: 16, messages: hello }).finalMessage();
    await anthropic.messages.create({ model: 'gpt-text', max_tokens: 16, messages: hello });
    await anthropic.messages.stream({ model: 'gpt-text', max_tokens: 16, messages: hello }).finalMessage();
    await openaiClient(gateway, issued.key).chat.completions.create({ model: 'claude-text', messages: hello });
    await waitFor('five ledger rows', async () => (await rowsOf(issued.id)).length === 5, 30_000);
    const rows = await rowsOf(issued.id);
    expect(rows.map((row) => [row.client_api, row.model_group, row.stream, row.status])).toEqual([
      ['anthropic-messages', 'claude-text', false, 200],
      ['anthropic-messages', 'claude-text', true, 200],
      ['anthropic-messages', 'gpt-text', false, 200],
      ['anthropic-messages', 'gpt-text', true, 200],
      ['openai-chat', 'claude-text', false, 200],
    ]);
    for (const row of rows) {
      expect(row.operation).toBe('chat');
      expect(row.usage_source).toBe('provider');
      expect(row.input_tokens).toBeGreaterThan(0);
      expect(row.output_tokens).toBeGreaterThan(0);
    }
  });

  it("refuses a model outside the key's allow-list, over its rate limit or over its budget in Anthropic's envelope", async () => {
    const limited = await createVirtualKey(gateway, {
      name: 'apis-limited',
      allowed_model_groups: ['claude-text', 'gpt-priced'],
      rpm_limit: 1000,
      budget: { amount_usd: pricedRequestCostUsd / 2, period: 'day' },
    });
    const client = anthropicClient(gateway, limited.key);
    const forbidden = await client.messages
      .create({ model: 'gpt-text', max_tokens: 16, messages: hello })
      .catch((error: unknown) => error);
    expect(forbidden).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((forbidden as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'permission_error' },
    });
    // The first priced request is admitted (the budget is not spent yet) and spends more than the budget.
    await client.messages.create({ model: 'gpt-priced', max_tokens: 16, messages: hello });
    await waitFor(
      'the budget to be spent',
      async () => {
        const refused = await client.messages
          .create({ model: 'gpt-priced', max_tokens: 16, messages: hello })
          .catch((error: unknown) => error);
        return refused instanceof Anthropic.RateLimitError;
      },
      30_000,
    );

    const strict = await createVirtualKey(gateway, { name: 'apis-strict', rpm_limit: 1 });
    const strictClient = anthropicClient(gateway, strict.key);
    await strictClient.messages.create({ model: 'claude-text', max_tokens: 16, messages: hello });
    const refused = await strictClient.messages
      .create({ model: 'claude-text', max_tokens: 16, messages: hello })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    expect((refused as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'rate_limit_error' },
    });
  });
});
