import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import OpenAI from 'openai';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../adapters/shared/database-migrate.ts';
import { findMigrationsFolder } from '../../adapters/shared/database-migrations-folder.ts';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { createEmptyTestDatabase } from '../services/test-database.ts';
import {
  adminCall,
  awayFromWindowEnd,
  chatBody,
  createVirtualKey,
  openaiClient,
  pricedRequestCostUsd,
  rawChat,
  sleep,
  waitFor,
} from './accounting-harness.ts';
import { readFixture } from './e2e-fixtures.ts';
import type { RunningGateway } from './gateway-process.ts';
import { startWorkerdAccountingGateway } from './workerd-accounting-harness.ts';

const expectedText = readFixture<{ choices: { message: { content: string } }[] }>('openai-compatible', 'text.json')
  .choices[0]?.message.content;

/** The Worker's default `TORII_KEY_CACHE_TTL_MS`: how long an isolate trusts its copy of a key. */
const keyCacheTtlMs = 5_000;

/** Every request id the test sent, and whether it succeeded, for the ledger check at the end. */
const idPrefix = `workerd-${crypto.randomUUID()}`;
const sent = new Map<string, boolean>();
let sequence = 0;
/** The budgeted key and how many of its requests were admitted, for the ledger's cost check. */
let budgeted: { id: string; admitted: number; refused: number } | undefined;

/** A chat completion through the openai SDK with a tracked request id; answers the text or the SDK's error. */
async function complete(
  gateway: RunningGateway,
  apiKey: string,
  options: { stream?: boolean; model?: string } = {},
): Promise<string | Error> {
  const client = openaiClient(gateway, apiKey);
  const requestId = `${idPrefix}-${sequence++}`;
  const body = { ...chatBody, model: options.model ?? chatBody.model };
  const headers = { headers: { 'x-request-id': requestId } };
  try {
    let text = '';
    if (options.stream === true) {
      for await (const chunk of await client.chat.completions.create({ ...body, stream: true }, headers))
        text += chunk.choices[0]?.delta.content ?? '';
    } else {
      text = (await client.chat.completions.create(body, headers)).choices[0]?.message.content ?? '';
    }
    sent.set(requestId, true);
    return text;
  } catch (error) {
    sent.set(requestId, false);
    return error as Error;
  }
}

/** Polls `gateway` until `apiKey` is refused with 401; answers the time from `since` (performance.now) to it. */
async function timeUntilRefused(gateway: RunningGateway, apiKey: string, since: number): Promise<number> {
  for (;;) {
    if (performance.now() - since > 30_000) throw new Error('the key was still accepted 30 s after revocation');
    const sentAt = performance.now();
    const answer = await rawChat(gateway, apiKey);
    if (answer.status === 401) return sentAt - since;
    expect(answer.status).toBe(200);
    await sleep(50);
  }
}

// The Worker on workerd (`wrangler dev --local`: KV, the Durable Object and the Queue simulated, Hyperdrive pointed at
// the test Postgres), two instances sharing the database and (through one --persist-to directory) the KV namespace.
describe('the full gateway on Cloudflare Workers (workerd): keys, limits, budgets, ledger', { timeout: 60_000 }, () => {
  let mock: MockUpstream;
  let database: { url: string; drop(): Promise<void> };
  let instanceA: RunningGateway;
  let instanceB: RunningGateway;
  /** Every instance that started, stopped after the tests even when the other failed to start. */
  let running: RunningGateway[] = [];
  let persistDirectory: string | undefined;

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createEmptyTestDatabase();
    persistDirectory = mkdtempSync(join(tmpdir(), 'torii-e2e-workerd-state-'));
    const options = { mockUrl: mock.url, databaseUrl: database.url, persistDirectory };
    // One after the other: both open the same local state (KV, Durable Objects, the queue) in SQLite, and two workerd
    // processes opening it at the same moment can fail with SQLITE_BUSY. The database is first used by the tests'
    // requests, so the two still migrate it concurrently.
    running = [await startWorkerdAccountingGateway(options)];
    running.push(await startWorkerdAccountingGateway({ ...options, environment: { TORII_RATE_LIMIT_MODE: 'strict' } }));
    [instanceA, instanceB] = running as [RunningGateway, RunningGateway];
  });

  afterAll(async () => {
    await Promise.all(running.map((instance) => instance.stop()));
    await mock?.close();
    await database?.drop();
    if (persistDirectory !== undefined) rmSync(persistDirectory, { recursive: true, force: true });
  });

  it('migrates the empty database at its first use, concurrently from both instances, into drizzle’s bookkeeping', async () => {
    const answers = await Promise.all([
      adminCall(instanceA, 'GET', '/keys'),
      adminCall(instanceB, 'GET', '/keys'),
      adminCall(instanceA, 'GET', '/keys'),
      adminCall(instanceB, 'GET', '/keys'),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    const folder = findMigrationsFolder({});
    const expected = readMigrationFiles({ migrationsFolder: folder }).map((migration) => ({
      hash: migration.hash,
      created_at: String(migration.folderMillis),
    }));
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      const rows = () => sql`select hash, created_at::text from drizzle.__drizzle_migrations order by id`;
      expect(await rows()).toEqual(expected);
      // The Node side's migrator (drizzle's own, under its session lock) finds nothing left to do.
      await migratePostgres(database.url, folder);
      expect(await rows()).toEqual(expected);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });

  it('creates a key through the admin API; the key works on both instances, streamed and not', async () => {
    const issued = await createVirtualKey(instanceA, { name: 'workerd-basic', owner: 'alice' });
    expect(issued.key).toMatch(/^sk-torii-/);
    expect(issued.body).toMatchObject({ object: 'virtual_key', status: 'active', owner: 'alice', version: 1 });
    const listed = await adminCall(instanceB, 'GET', '/keys?owner=alice');
    expect((listed.body.data as { id: string }[]).map((key) => key.id)).toContain(issued.id);
    expect(JSON.stringify(listed.body)).not.toContain(issued.key);
    for (const gateway of [instanceA, instanceB]) {
      for (const stream of [false, true]) expect(await complete(gateway, issued.key, { stream })).toBe(expectedText);
    }
    const refused = await complete(instanceA, 'sk-torii-not-a-real-key', {});
    expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('refuses (403) a model group outside the key’s allow-list', async () => {
    const issued = await createVirtualKey(instanceA, { name: 'workerd-allow', allowed_model_groups: ['gpt-text'] });
    for (const gateway of [instanceA, instanceB]) {
      expect(await complete(gateway, issued.key, { model: 'gpt-text' })).toBe(expectedText);
      for (const stream of [false, true]) {
        const refused = await complete(gateway, issued.key, { model: 'gpt-other', stream });
        expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
        expect(refused).toMatchObject({ status: 403, code: 'model_not_allowed' });
      }
      const models = await openaiClient(gateway, issued.key).models.list();
      expect(models.data.map((model) => model.id)).toEqual(['gpt-text']);
    }
  });

  it('limits a key to its rpm_limit with the OpenAI 429 envelope and x-ratelimit-* headers (Durable Object; A leased, B strict)', async () => {
    const rpmLimit = 3;
    await awayFromWindowEnd(10);
    for (const gateway of [instanceA, instanceB]) {
      const issued = await createVirtualKey(gateway, { name: 'workerd-rpm', rpm_limit: rpmLimit });
      const burst = await Promise.all(Array.from({ length: rpmLimit + 2 }, () => complete(gateway, issued.key)));
      expect(burst.filter((answer) => answer === expectedText)).toHaveLength(rpmLimit);
      for (const refused of burst.filter((answer) => answer !== expectedText)) {
        expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
        expect(refused).toMatchObject({ status: 429, code: 'rate_limit_exceeded', type: 'requests' });
      }
      const refusal = await rawChat(gateway, issued.key);
      expect(refusal.status).toBe(429);
      expect(refusal.body).toEqual({
        error: {
          message: expect.stringMatching(
            /^Rate limit reached for key \S+ on requests per min \(RPM\): Limit 3, Used 3, Requested 1\. Please try again in /,
          ),
          type: 'requests',
          param: null,
          code: 'rate_limit_exceeded',
        },
      });
      expect(Number(refusal.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(refusal.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect(refusal.headers.get('x-ratelimit-limit-requests')).toBe(String(rpmLimit));
      expect(refusal.headers.get('x-ratelimit-remaining-requests')).toBe('0');
      expect(refusal.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+m)?\d+(\.\d+)?s$/);
    }
  });

  it('refuses a key over its budget with 429 insufficient_quota / budget_exceeded', async () => {
    const budgetUsd = 0.25;
    const needed = Math.ceil(budgetUsd / pricedRequestCostUsd);
    const issued = await createVirtualKey(instanceA, {
      name: 'workerd-budget',
      budget: { amount_usd: budgetUsd, period: 'total' },
    });
    let admitted = 0;
    let refusal: Error | undefined;
    for (let index = 0; index < 10 && refusal === undefined; index++) {
      const answer = await complete(instanceA, issued.key, { model: 'gpt-priced', stream: index % 2 === 1 });
      if (answer instanceof Error) refusal = answer;
      else admitted++;
    }
    // One isolate counts its own spend at once: exactly the requests needed to reach the budget are admitted.
    expect(admitted).toBe(needed);
    expect(refusal).toBeInstanceOf(OpenAI.RateLimitError);
    expect(refusal).toMatchObject({ status: 429, type: 'insufficient_quota', code: 'budget_exceeded' });
    expect((refusal as InstanceType<typeof OpenAI.RateLimitError>).headers.get('x-should-retry')).toBe('false');
    budgeted = { id: issued.id, admitted, refused: 2 };
    // The spend was pushed to the key's Durable Object after those requests; instance B (whose objects share the
    // persisted storage) loads it from there and refuses from its first request.
    await sleep(500);
    const onB = await complete(instanceB, issued.key, { model: 'gpt-priced' });
    expect(onB).toMatchObject({ status: 429, type: 'insufficient_quota', code: 'budget_exceeded' });
  });

  it(`stops a key revoked through instance A on instance B within the key cache TTL (${keyCacheTtlMs} ms) plus KV`, async () => {
    const issued = await createVirtualKey(instanceA, { name: 'workerd-revoke' });
    for (let index = 0; index < 3; index++) {
      expect((await rawChat(instanceB, issued.key)).status).toBe(200);
      expect((await rawChat(instanceA, issued.key)).status).toBe(200);
    }
    const revoked = await adminCall(instanceA, 'POST', `/keys/${issued.id}/revoke`);
    const revokedAt = performance.now();
    expect(revoked.body).toMatchObject({ status: 'revoked', version: issued.version + 1 });
    // The instance that revoked it refuses at once (its own invalidation bus).
    const local = await rawChat(instanceA, issued.key);
    expect(local.status).toBe(401);
    expect(local.body.error).toMatchObject({ type: 'invalid_request_error', code: 'api_key_revoked' });
    const propagationMs = await timeUntilRefused(instanceB, issued.key, revokedAt);
    console.log(`workerd revocation reached instance B after ${propagationMs.toFixed(0)} ms`);
    expect(propagationMs).toBeLessThanOrEqual(keyCacheTtlMs + 1_000);
    expect(await complete(instanceB, issued.key)).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('logged no failure of a background part (key cache, Durable Object calls, budget pushes, usage sends)', () => {
    for (const gateway of [instanceA, instanceB]) {
      const problems = gateway
        .output()
        .split('\n')
        .filter((line) => /"level":"(warn|error)"/.test(line));
      expect(problems).toEqual([]);
    }
  });

  it('holds exactly one ledger row per successful request once the queue has drained', async () => {
    const succeeded = [...sent].filter(([, ok]) => ok).map(([requestId]) => requestId);
    expect(succeeded.length).toBeGreaterThanOrEqual(10);
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      const rowsByRequest = async () =>
        new Map(
          (
            await sql<{ request_id: string; rows: number; status: number }[]>`
              select client_request_id as request_id, count(*)::int as rows, min(status)::int as status
              from usage_events where starts_with(client_request_id, ${idPrefix}) group by client_request_id`
          ).map((row) => [row.request_id, row]),
        );
      await waitFor(
        'the queue consumer to write every successful request',
        async () => {
          const rows = await rowsByRequest();
          return succeeded.every((requestId) => rows.has(requestId));
        },
        15_000,
        200,
      );
      await sleep(1_500); // a duplicate delivery, if any, would land by now
      const rows = await rowsByRequest();
      expect([...rows.values()].filter((row) => row.rows !== 1)).toEqual([]);
      expect([...rows.keys()].filter((requestId) => !sent.has(requestId))).toEqual([]);
      expect(
        [...rows.values()]
          .filter((row) => row.status === 200)
          .map((row) => row.request_id)
          .sort(),
      ).toEqual(succeeded.sort());
    } finally {
      await sql.end({ timeout: 5 });
    }
    // The admin API reads the same ledger on the Worker.
    const report = await adminCall(instanceB, 'GET', `/usage?key_id=${budgeted?.id}&group_by=model_group`);
    expect(report.status).toBe(200);
    // The refused requests are in the ledger too (status 429, no cost).
    expect(report.body.data).toEqual([
      expect.objectContaining({
        model_group: 'gpt-priced',
        requests: (budgeted?.admitted ?? 0) + (budgeted?.refused ?? 0),
      }),
    ]);
    const [row] = report.body.data as { cost_usd: number }[];
    expect(row?.cost_usd).toBeCloseTo((budgeted?.admitted ?? 0) * pricedRequestCostUsd, 9);
  });
});
