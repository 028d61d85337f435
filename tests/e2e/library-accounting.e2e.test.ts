import { serve, type ServerType } from '@hono/node-server';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import OpenAI, { AuthenticationError, RateLimitError } from 'openai';
import postgres from 'postgres';
import { createGateway } from 'torii-gateway';
import { openDatabaseAccounting, type DatabaseAccounting } from 'torii-gateway/accounting';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockUpstreamApiKey, startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { createEmptyTestDatabase } from '../services/test-database.ts';
import { readFixture } from './e2e-fixtures.ts';

const expectedText = readFixture<{ choices: { message: { content: string } }[] }>('openai-compatible', 'text.json')
  .choices[0]?.message.content;
const masterKey = 'sk-library-accounting-master-key';

// The package as a library (its "exports", as built by `pnpm build`): the gateway with keys, limits and the ledger in
// Postgres, mounted under /llm in someone else's Hono app served by Node.
describe('torii as a library with accounting, mounted in another Hono app (Postgres)', () => {
  let mock: MockUpstream;
  let database: { url: string; drop(): Promise<void> };
  let accounting: DatabaseAccounting;
  let server: ServerType;
  let baseURL: string;

  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${baseURL}/llm/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const client = (apiKey: string) => new OpenAI({ baseURL: `${baseURL}/llm/v1`, apiKey, maxRetries: 0 });
  const chat = (apiKey: string, requestId: string) =>
    client(apiKey).chat.completions.create(
      { model: 'fast', messages: [{ role: 'user', content: 'Hi' }] },
      { headers: { 'x-request-id': requestId } },
    );
  const ledger = async (requestIds: string[]) => {
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      return await sql<{ request_id: string; key_id: string | null; status: number; model_group: string }[]>`
        select client_request_id as request_id, key_id, status, model_group from usage_events
        where client_request_id = any(${requestIds}) order by client_request_id`;
    } finally {
      await sql.end({ timeout: 5 });
    }
  };

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createEmptyTestDatabase();
    // Migrates the fresh database, opens the pool, the Drizzle stores and the usage queue.
    accounting = await openDatabaseAccounting({
      masterKey,
      databaseUrl: database.url,
      dataDirectory: mkdtempSync(join(tmpdir(), 'torii-e2e-library-')),
    });
    const app = new Hono();
    app.get('/', (c) => c.text('the host application'));
    app.route(
      '/llm',
      createGateway(
        {
          modelGroups: {
            fast: {
              deployments: [
                { provider: 'openai', model: 'text', baseURL: `${mock.url}/v1`, apiKey: '${UPSTREAM_KEY}' },
              ],
            },
          },
        },
        { accounting, environment: { UPSTREAM_KEY: mockUpstreamApiKey } },
      ),
    );
    const port = await new Promise<number>((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
    });
    baseURL = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await accounting?.close();
    await mock?.close();
    await database?.drop();
  });

  it('issues a key through the mounted admin API; the openai SDK uses it; the ledger has the row', async () => {
    const created = await admin('POST', '/keys', { name: 'library', rpm_limit: 3 });
    expect(created.status).toBe(201);
    const key = String(created.body.key);
    const prefix = `library-${crypto.randomUUID()}`;
    const requestIds = [1, 2, 3].map((index) => `${prefix}-${index}`);
    for (const requestId of requestIds) {
      expect((await chat(key, requestId)).choices[0]?.message.content).toBe(expectedText);
    }
    // The key's limit holds: a 4th request in the minute is refused the way OpenAI refuses it.
    const refusedId = `${prefix}-refused`;
    const refused = await chat(key, refusedId).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimitError);
    expect(refused).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    // The queue writes within its 1 s batch delay; the refused request's row may come in a later batch than the others,
    // and the report below counts it, so the wait is for all four rows.
    await expect
      .poll(
        async () => (await ledger([...requestIds, refusedId])).map((row) => [row.request_id, row.key_id, row.status]),
        {
          timeout: 15_000,
        },
      )
      .toEqual([
        ...requestIds.map((requestId) => [requestId, created.body.id, 200]),
        [refusedId, created.body.id, 429],
      ]);
    const report = await admin('GET', `/usage?key_id=${String(created.body.id)}&group_by=model_group`);
    expect(report.body.data).toEqual([expect.objectContaining({ model_group: 'fast', requests: 4 })]);
  });

  it('refuses a revoked key at once, and the master key keeps working', async () => {
    const created = await admin('POST', '/keys', { name: 'library-revoke' });
    const key = String(created.body.key);
    await chat(key, `library-${crypto.randomUUID()}`);
    expect((await admin('POST', `/keys/${String(created.body.id)}/revoke`)).body).toMatchObject({ status: 'revoked' });
    const refused = await chat(key, `library-${crypto.randomUUID()}`).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AuthenticationError);
    expect(refused).toMatchObject({ status: 401, code: 'api_key_revoked' });
    expect((await chat(masterKey, `library-${crypto.randomUUID()}`)).choices[0]?.message.content).toBe(expectedText);
    expect(await (await fetch(`${baseURL}/`)).text()).toBe('the host application');
  });

  it('takes accounting or an authenticator, not both', () => {
    const config = { modelGroups: { fast: { deployments: [{ provider: 'openai', model: 'text', apiKey: 'x' }] } } };
    expect(() => createGateway(config, { accounting, authenticator: accounting.authenticator })).toThrow(/not both/);
  });

  it('writes queued usage on close(), before the database closes', async () => {
    const created = await admin('POST', '/keys', { name: 'library-close' });
    const requestId = `library-${crypto.randomUUID()}-close`;
    await chat(String(created.body.key), requestId);
    // Straight away, inside the queue's 1 s batch delay: only close() can have written it.
    await new Promise((resolve) => server.close(resolve));
    await accounting.close({ timeoutMs: 5_000 });
    expect((await ledger([requestId])).map((row) => row.request_id)).toEqual([requestId]);
  });
});
