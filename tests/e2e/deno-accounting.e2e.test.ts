import { randomUUID } from 'node:crypto';
import { RateLimitError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { createEmptyTestDatabase } from '../services/test-database.ts';
import { startUpstashBridge, type UpstashBridge } from '../upstash-bridge/upstash-bridge.ts';
import {
  adminCall,
  awayFromWindowEnd,
  chatBody,
  createVirtualKey,
  expectStrictAdmissions,
  ledgerRowCounts,
  openaiClient,
  pricedRequestCostUsd,
  rawChat,
  requiredServiceUrl,
  sleep,
  waitFor,
  watchRateLimitStore,
} from './accounting-harness.ts';
import { startLoad } from './accounting-load.ts';
import { startDenoAccountingGateway } from './deno-accounting-harness.ts';
import { readFixture } from './e2e-fixtures.ts';
import type { RunningGateway } from './gateway-process.ts';

const expectedText = readFixture<{ choices: { message: { content: string } }[] }>('openai-compatible', 'text.json')
  .choices[0]?.message.content;

/** The Deno server's stated bound for a key change to reach another instance (TORII_KEY_CACHE_TTL_MS default). */
const keyPropagationBoundMs = 5_000;
const rpmLimit = 30;
/** Leased mode's under-admission for P = 2 processes: (P - 1) x (2 slices + one request), a slice 10% of 30. */
const leasedUnderAdmission = (2 - 1) * (2 * Math.ceil(0.1 * rpmLimit) + 1);

/**
 * Sends `3 * rpmLimit` completions from 16 loops at once (8 per instance, alternating), each on a new connection;
 * counts admitted and refused (429) requests. (A burst of all 90 in the same instant is covered by the limiter's
 * unit test: one lease sized to every waiting request.)
 */
async function burst(instances: RunningGateway[], apiKey: string) {
  await awayFromWindowEnd(10); // the whole burst inside one minute window
  const outcomes: unknown[] = [];
  let sent = 0;
  await Promise.all(
    Array.from({ length: 16 }, async (_, lane) => {
      const client = openaiClient(instances[lane % instances.length] as RunningGateway, apiKey);
      while (sent < 3 * rpmLimit) {
        sent += 1;
        outcomes.push(
          await client.chat.completions.create(chatBody).then(
            () => 'ok' as const,
            (error: unknown) => error,
          ),
        );
      }
    }),
  );
  const refusals = outcomes.filter((outcome) => outcome !== 'ok');
  for (const refusal of refusals) {
    expect(refusal).toBeInstanceOf(RateLimitError);
    expect(refusal).toMatchObject({ status: 429, code: 'rate_limit_exceeded', type: 'requests' });
  }
  return { admitted: outcomes.length - refusals.length, refused: refusals.length };
}

/** A completion through `gateway` with `apiKey`, streamed or not; returns the text. */
async function complete(gateway: RunningGateway, apiKey: string, stream: boolean): Promise<string> {
  const client = openaiClient(gateway, apiKey);
  const messages = [{ role: 'user' as const, content: 'hello' }];
  if (!stream)
    return (await client.chat.completions.create({ model: 'gpt-text', messages })).choices[0]?.message.content ?? '';
  let text = '';
  for await (const chunk of await client.chat.completions.create({ model: 'gpt-text', messages, stream: true }))
    text += chunk.choices[0]?.delta.content ?? '';
  return text;
}

/** Services shared by the tests of this file: the mock upstream, a database, and the Upstash bridge over Redis. */
function deployment() {
  const shared: { mock?: MockUpstream; database?: { url: string; drop(): Promise<void> }; bridge?: UpstashBridge } = {};
  beforeAll(async () => {
    shared.mock = await startMockUpstream();
    shared.database = await createEmptyTestDatabase();
    shared.bridge = await startUpstashBridge({
      redisUrl: requiredServiceUrl('TORII_TEST_REDIS_URL'),
      token: randomUUID(),
    });
  });
  afterAll(async () => {
    await shared.bridge?.close();
    await shared.mock?.close();
    await shared.database?.drop();
  });
  return {
    options: (rateLimitMode?: 'leased' | 'strict') => ({
      mockUrl: (shared.mock as MockUpstream).url,
      databaseUrl: (shared.database as { url: string }).url,
      upstash: { url: (shared.bridge as UpstashBridge).url, token: (shared.bridge as UpstashBridge).token },
      ...(rateLimitMode === undefined ? {} : { rateLimitMode }),
    }),
    databaseUrl: () => (shared.database as { url: string }).url,
  };
}

// Two instances sharing one Postgres and one Upstash (the REST bridge in front of the real Redis): one on Deno, one on
// Bun. Both run the same standalone server on the server kit, so a mixed fleet shares keys, limits, budgets and the
// ledger as a fleet of either does.
describe(
  'keys, limits, budgets and the ledger on a Deno and a Bun instance (Postgres + Upstash)',
  { timeout: 90_000 },
  () => {
    const services = deployment();
    let instanceA: RunningGateway;
    let instanceB: RunningGateway;

    beforeAll(async () => {
      [instanceA, instanceB] = await Promise.all([
        startDenoAccountingGateway(services.options()),
        startDenoAccountingGateway({ ...services.options(), runtime: 'bun' }),
      ]);
    });

    afterAll(async () => {
      await Promise.all([instanceA?.stop(), instanceB?.stop()]);
    });

    it('creates a key through the admin API of one instance; it works on both, and the ledger has its rows', async () => {
      const issued = await createVirtualKey(instanceA, { name: 'deno-basic', owner: 'alice' });
      expect(issued.key).toMatch(/^sk-torii-/);
      for (const gateway of [instanceA, instanceB]) {
        const got = await adminCall(gateway, 'GET', `/keys/${issued.id}`);
        expect(got.body).toMatchObject({ id: issued.id, owner: 'alice', status: 'active' });
        for (const stream of [false, true]) expect(await complete(gateway, issued.key, stream)).toBe(expectedText);
      }
      const unknown = await rawChat(instanceB, `${issued.key.slice(0, -8)}AAAAAAAA`);
      expect(unknown.status).toBe(401);
      await waitFor(
        'four ledger rows for the key, readable through either instance',
        async () => {
          const report = await adminCall(instanceB, 'GET', `/usage?key_id=${issued.id}&group_by=key`);
          return (report.body.data as { requests: number }[])[0]?.requests === 4;
        },
        10_000,
      );
    });

    it(`admits at most rpm_limit (${rpmLimit}) per minute through both instances, not twice it`, async () => {
      const issued = await createVirtualKey(instanceA, { name: 'deno-leased', rpm_limit: rpmLimit });
      const { admitted, refused } = await burst([instanceA, instanceB], issued.key);
      console.log(
        `Deno leased: ${admitted} admitted, ${refused} refused (limit ${rpmLimit}, bound -${leasedUnderAdmission})`,
      );
      expect(admitted).toBeLessThanOrEqual(rpmLimit);
      expect(admitted).toBeGreaterThanOrEqual(rpmLimit - leasedUnderAdmission);
      const refusal = await rawChat(instanceB, issued.key);
      expect(refusal.status).toBe(429);
      expect(refusal.headers.get('x-ratelimit-limit-requests')).toBe(String(rpmLimit));
    });

    it(`stops a key revoked through instance A on instance B within ${keyPropagationBoundMs} ms (its key cache lifetime)`, async () => {
      const issued = await createVirtualKey(instanceA, { name: 'deno-revoke' });
      // Both instances hold the key in their in-process cache.
      for (const gateway of [instanceA, instanceB]) expect((await rawChat(gateway, issued.key)).status).toBe(200);
      const revoked = await adminCall(instanceA, 'POST', `/keys/${issued.id}/revoke`);
      const revokedAt = performance.now();
      expect(revoked.body).toMatchObject({ status: 'revoked' });
      // The instance that revoked refuses at once (its own invalidation).
      const onA = await rawChat(instanceA, issued.key);
      expect(onA.status).toBe(401);
      expect(onA.body.error).toMatchObject({ code: 'api_key_revoked' });
      let refusedAfterMs: number | undefined;
      while (refusedAfterMs === undefined) {
        const sentAt = performance.now();
        const answer = await rawChat(instanceB, issued.key);
        if (answer.status === 401) {
          expect(answer.body.error).toMatchObject({ code: 'api_key_revoked' });
          refusedAfterMs = sentAt - revokedAt;
        } else {
          expect(answer.status).toBe(200);
          if (sentAt - revokedAt > keyPropagationBoundMs + 5_000)
            throw new Error('still accepted 10 s after revocation');
          await sleep(20);
        }
      }
      console.log(`Deno revocation reached instance B after ${Math.max(0, refusedAfterMs).toFixed(0)} ms`);
      // The bound, plus one Upstash read and this loop's polling interval.
      expect(refusedAfterMs).toBeLessThanOrEqual(keyPropagationBoundMs + 500);
      for (let index = 0; index < 5; index++) expect((await rawChat(instanceB, issued.key)).status).toBe(401);
    });

    it('refuses a key over its budget on both instances (spend shared through Upstash)', async () => {
      // $0.95 with requests of $0.10: the 10th request crosses it. Instances that never shared their spend would admit
      // 10 each, the last ~2.5 s after the crossing.
      const budgetUsd = 0.95;
      const needed = Math.ceil(budgetUsd / pricedRequestCostUsd);
      const issued = await createVirtualKey(instanceA, {
        name: 'deno-budget',
        budget: { amount_usd: budgetUsd, period: 'total' },
      });
      const body = { ...chatBody, model: 'gpt-priced' };
      // Paced requests alternating instances until the first refusal.
      const successes: number[] = [];
      let firstRefusal: { status: number; body: Record<string, unknown> } | undefined;
      for (let index = 0; index < 40 && firstRefusal === undefined; index++) {
        const answer = await rawChat(index % 2 === 0 ? instanceA : instanceB, issued.key, body);
        if (answer.status === 200) successes.push(performance.now());
        else firstRefusal = answer;
        await sleep(250);
      }
      expect(firstRefusal?.status).toBe(429);
      expect(firstRefusal?.body.error).toMatchObject({ type: 'insufficient_quota', code: 'budget_exceeded' });
      expect(successes.length).toBeGreaterThanOrEqual(needed);
      const crossedAt = successes[needed - 1] as number;
      console.log(
        `Deno budget: ${successes.length} admitted on a $${budgetUsd} budget of $${pricedRequestCostUsd} requests`,
      );
      // The stated overshoot: what another process spends within one push and one refresh (~1.25 s; 2 s allowed).
      expect(successes.filter((at) => at > crossedAt + 2_000)).toEqual([]);
      await sleep(1_500);
      for (const gateway of [instanceA, instanceB]) {
        const refusal = await openaiClient(gateway, issued.key)
          .chat.completions.create(body)
          .catch((error: unknown) => error);
        expect(refusal).toBeInstanceOf(RateLimitError);
        expect(refusal).toMatchObject({ status: 429, code: 'budget_exceeded' });
      }
    });
  },
);

describe('strict rate limits on two Deno instances (Upstash)', { timeout: 90_000 }, () => {
  const services = deployment();
  let instances: RunningGateway[] = [];

  beforeAll(async () => {
    instances = await Promise.all([
      startDenoAccountingGateway(services.options('strict')),
      startDenoAccountingGateway(services.options('strict')),
    ]);
  });

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
  });

  it(`admits exactly rpm_limit (${rpmLimit}) of ${3 * rpmLimit} requests from 16 concurrent loops`, async () => {
    const issued = await createVirtualKey(instances[0] as RunningGateway, { name: 'deno-strict', rpm_limit: rpmLimit });
    const store = watchRateLimitStore(instances);
    const { admitted, refused } = await burst(instances, issued.key);
    console.log(`Deno strict: ${admitted} admitted, ${refused} refused (limit ${rpmLimit}; ${store.describe()})`);
    expectStrictAdmissions(admitted, rpmLimit, instances.length, store.failed());
  });
});

describe('the usage ledger of a Deno instance under load (Postgres + Upstash)', { timeout: 90_000 }, () => {
  const services = deployment();

  it('writes exactly one row per successful request when SIGTERM arrives mid-load', async () => {
    const gateway = await startDenoAccountingGateway(services.options());
    try {
      const { key } = await createVirtualKey(gateway, { name: 'deno-sigterm' });
      const idPrefix = `deno-sigterm-${randomUUID()}`;
      // Every 4th request is a stream from `gpt-slow` (about 2 s), so streams are mid-flight at SIGTERM.
      const load = startLoad({
        client: openaiClient(gateway, key, { reuseConnections: true }),
        idPrefix,
        concurrency: 60,
        total: 300,
        streamModel: 'gpt-slow',
      });
      await waitFor('120 finished requests', async () => load.requests.length >= 120, 30_000, 5);
      const signalledAt = performance.now();
      const exitCode = await gateway.stop();
      await load.done;
      expect(exitCode).toBe(0);
      const counts = await ledgerRowCounts(services.databaseUrl(), idPrefix);
      const succeeded = load.requests.filter((request) => request.succeeded);
      const drainedStreams = succeeded.filter(
        (request) => request.stream && request.sentAt < signalledAt && request.finishedAt > signalledAt,
      );
      const sent = new Set(load.requests.map((request) => request.requestId));
      console.log(
        `Deno SIGTERM: ${load.requests.length} requests, ${succeeded.length} succeeded ` +
          `(${drainedStreams.length} streams in flight at SIGTERM finished), ${counts.size} ledger rows`,
      );
      expect(load.requests).toHaveLength(300);
      expect(succeeded.length).toBeGreaterThanOrEqual(120);
      expect(drainedStreams.length).toBeGreaterThan(0);
      expect(succeeded.filter((request) => !counts.has(request.requestId))).toEqual([]);
      expect([...counts].filter(([, rows]) => rows !== 1)).toEqual([]);
      expect([...counts.keys()].filter((requestId) => !sent.has(requestId))).toEqual([]);
    } finally {
      await gateway.stop();
    }
  });

  it('loses at most its queue (~1.2 s of requests) when killed with SIGKILL', async () => {
    const gateway = await startDenoAccountingGateway(services.options());
    try {
      const { key } = await createVirtualKey(gateway, { name: 'deno-kill' });
      const idPrefix = `deno-kill-${randomUUID()}`;
      const load = startLoad({ client: openaiClient(gateway, key), idPrefix, concurrency: 16, streamEvery: 4 });
      // Killed once enough has been served to judge the loss (an event, not a time: a loaded machine serves slower).
      await waitFor(
        '120 requests served before the kill',
        async () => load.requests.filter((request) => request.succeeded).length >= 120,
        60_000,
      );
      process.kill(gateway.pid as number, 'SIGKILL');
      const killedAt = performance.now();
      await load.stop();
      const counts = await ledgerRowCounts(services.databaseUrl(), idPrefix);
      const succeeded = load.requests.filter((request) => request.succeeded);
      const missing = succeeded.filter((request) => !counts.has(request.requestId));
      // The queue writes every 1 s (or 500 rows): a request is lost only if it finished within ~1 s of the kill
      // (plus the write in progress).
      const windowStart = killedAt - 1_500;
      const inWindow = succeeded.filter((request) => request.finishedAt >= windowStart);
      const offsets = missing.map((request) => request.finishedAt - killedAt);
      console.log(
        `Deno kill -9: ${succeeded.length} succeeded, ${missing.length} without a ledger row (${inWindow.length} ` +
          `succeeded in the last 1.5 s), lost between ${Math.min(...offsets, 0).toFixed(0)} and ` +
          `${Math.max(...offsets, 0).toFixed(0)} ms from the kill`,
      );
      expect(succeeded.length).toBeGreaterThan(100);
      expect([...counts].filter(([, rows]) => rows !== 1)).toEqual([]);
      for (const lost of missing) {
        expect(lost.finishedAt).toBeGreaterThanOrEqual(windowStart);
        expect(lost.finishedAt).toBeLessThanOrEqual(killedAt + 250);
      }
    } finally {
      await gateway.stop();
    }
  });
});
