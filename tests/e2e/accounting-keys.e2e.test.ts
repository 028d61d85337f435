import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { readFixture } from './e2e-fixtures.ts';
import { createEmptyTestDatabase } from '../services/test-database.ts';
import {
  accountingGatewayConfig,
  adminCall,
  createVirtualKey,
  openaiClient,
  rawChat,
  requiredServiceUrl,
  sleep,
  startAccountingGateway,
} from './accounting-harness.ts';
import type { RunningGateway } from './gateway-process.ts';

const expectedText = readFixture<{ choices: { message: { content: string } }[] }>('openai-compatible', 'text.json')
  .choices[0]?.message.content;

/** A completion through `gateway` with `apiKey`, streamed or not; returns the text. */
async function complete(gateway: RunningGateway, apiKey: string, stream: boolean, model = 'gpt-text'): Promise<string> {
  const client = openaiClient(gateway, apiKey);
  const messages = [{ role: 'user' as const, content: 'hello' }];
  if (!stream) {
    const completion = await client.chat.completions.create({ model, messages });
    return completion.choices[0]?.message.content ?? '';
  }
  let text = '';
  for await (const chunk of await client.chat.completions.create({ model, messages, stream: true }))
    text += chunk.choices[0]?.delta.content ?? '';
  return text;
}

/** The status `gateway` answers a chat completion with `apiKey` (on a new connection, so any worker may serve it). */
async function chatStatus(gateway: RunningGateway, apiKey: string): Promise<number> {
  return (await rawChat(gateway, apiKey)).status;
}

/**
 * Polls `gateway` every 10 ms (each poll on a new connection, so both workers are asked) until `refusals` polls in a
 * row answer 401; returns the time from `since` (performance.now) to the first poll of that run.
 */
async function timeUntilRefused(gateway: RunningGateway, apiKey: string, since: number, refusals = 6) {
  let firstRefusalAt: number | undefined;
  let consecutive = 0;
  const deadline = since + 10_000;
  while (consecutive < refusals) {
    if (performance.now() > deadline) throw new Error('the key was still accepted 10 s after revocation');
    const sentAt = performance.now();
    const status = await chatStatus(gateway, apiKey);
    if (status === 401) {
      firstRefusalAt ??= sentAt;
      consecutive++;
    } else {
      expect(status).toBe(200);
      firstRefusalAt = undefined;
      consecutive = 0;
    }
    await sleep(Math.max(0, 10 - (performance.now() - sentAt)));
  }
  return (firstRefusalAt as number) - since;
}

// Two gateway instances (each a cluster of two workers) sharing one Postgres database and one Redis.
describe('virtual keys across two Node instances (Postgres + Redis)', { timeout: 60_000 }, () => {
  let mock: MockUpstream;
  let database: { url: string; drop(): Promise<void> };
  let instanceA: RunningGateway;
  let instanceB: RunningGateway;

  beforeAll(async () => {
    const redisUrl = requiredServiceUrl('TORII_TEST_REDIS_URL');
    mock = await startMockUpstream();
    database = await createEmptyTestDatabase();
    const options = { mockUrl: mock.url, databaseUrl: database.url, redisUrl };
    [instanceA, instanceB] = await Promise.all([startAccountingGateway(options), startAccountingGateway(options)]);
  });

  afterAll(async () => {
    await Promise.all([instanceA?.stop(), instanceB?.stop()]);
    await mock?.close();
    await database?.drop();
  });

  it('shows a new secret once, and the key works through both instances, streamed and not', async () => {
    const issued = await createVirtualKey(instanceA, { name: 'e2e-basic', owner: 'alice' });
    expect(issued.key).toMatch(/^sk-/);
    expect(issued.body).toMatchObject({ object: 'virtual_key', status: 'active', owner: 'alice', version: 1 });
    const prefix = String(issued.body.key_prefix);
    expect(issued.key.startsWith(prefix)).toBe(true);
    expect(prefix.length).toBeLessThan(issued.key.length);

    // The list (on either instance) and a get show the prefix only.
    for (const gateway of [instanceA, instanceB]) {
      const list = await adminCall(gateway, 'GET', '/keys?owner=alice');
      expect(list.status).toBe(200);
      const listed = (list.body.data as Record<string, unknown>[]).find((key) => key.id === issued.id);
      expect(listed).toMatchObject({ key_prefix: prefix, name: 'e2e-basic' });
      expect(listed).not.toHaveProperty('key');
      expect(JSON.stringify(list.body)).not.toContain(issued.key);
      const got = await adminCall(gateway, 'GET', `/keys/${issued.id}`);
      expect(got.body).not.toHaveProperty('key');
      expect(JSON.stringify(got.body)).not.toContain(issued.key);
    }

    for (const gateway of [instanceA, instanceB]) {
      for (const stream of [false, true]) expect(await complete(gateway, issued.key, stream)).toBe(expectedText);
    }
  });

  it('refuses (403) a model group outside the allow-list and lists only allowed groups', async () => {
    const issued = await createVirtualKey(instanceA, { name: 'e2e-allow', allowed_model_groups: ['gpt-text'] });
    for (const gateway of [instanceA, instanceB]) {
      expect(await complete(gateway, issued.key, false, 'gpt-text')).toBe(expectedText);
      const refused = await complete(gateway, issued.key, false, 'gpt-other').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(refused).toMatchObject({ status: 403, code: 'model_not_allowed' });
      const streamRefused = await complete(gateway, issued.key, true, 'gpt-other').catch((error: unknown) => error);
      expect(streamRefused).toBeInstanceOf(OpenAI.PermissionDeniedError);

      const models = await openaiClient(gateway, issued.key).models.list();
      expect(models.data.map((model) => model.id)).toEqual(['gpt-text']);
      const all = await openaiClient(gateway, (await createVirtualKey(gateway, { name: 'e2e-all' })).key).models.list();
      expect(all.data.map((model) => model.id).sort()).toEqual(
        Object.keys(accountingGatewayConfig('http://unused').modelGroups as Record<string, unknown>).sort(),
      );
    }
  });

  it('answers a bad admin body with a 400 naming the field, and changes nothing', async () => {
    const issued = await createVirtualKey(instanceA, { name: 'e2e-validation', team: 'validation', rpm_limit: 5 });
    const snapshot = async () => {
      const list = await adminCall(instanceB, 'GET', '/keys?limit=100');
      const got = await adminCall(instanceB, 'GET', `/keys/${issued.id}`);
      return { ids: (list.body.data as { id: string }[]).map((key) => key.id), key: got.body };
    };
    const before = await snapshot();
    const past = new Date(Date.now() - 60_000).toISOString();
    const cases: Array<{ method: string; path: string; body: unknown; param: string }> = [
      { method: 'POST', path: '/keys', body: { name: 'x', rpm_limt: 5 }, param: 'rpm_limt' },
      { method: 'POST', path: '/keys', body: { name: 'x', rpm_limit: -1 }, param: 'rpm_limit' },
      {
        method: 'POST',
        path: '/keys',
        body: { name: 'x', allowed_model_groups: ['nope'] },
        param: 'allowed_model_groups.[0]',
      },
      { method: 'POST', path: '/keys', body: { name: 'x', expires_at: past }, param: 'expires_at' },
      { method: 'PATCH', path: `/keys/${issued.id}`, body: { rpm_limit: 10, surprise: true }, param: 'surprise' },
      { method: 'PATCH', path: `/keys/${issued.id}`, body: { rpm_limit: -5 }, param: 'rpm_limit' },
      {
        method: 'PATCH',
        path: `/keys/${issued.id}`,
        body: { allowed_model_groups: ['gpt-text', 'nope'] },
        param: 'allowed_model_groups.[1]',
      },
      { method: 'PATCH', path: `/keys/${issued.id}`, body: { expires_at: past }, param: 'expires_at' },
    ];
    for (const { method, path, body, param } of cases) {
      const answer = await adminCall(instanceA, method, path, body);
      expect({ method, body, status: answer.status }).toEqual({ method, body, status: 400 });
      expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', param });
    }
    const after = await snapshot();
    expect(after.ids).toEqual(before.ids);
    expect(after.key).toEqual(before.key);
    expect(after.key).toMatchObject({ version: issued.version, rpm_limit: 5, expires_at: null });
  });

  it('refuses (403) a virtual key on the admin API', async () => {
    const issued = await createVirtualKey(instanceA, { name: 'e2e-not-admin' });
    for (const gateway of [instanceA, instanceB]) {
      for (const [method, path, body] of [
        ['GET', '/keys', undefined],
        ['POST', '/keys', { name: 'sneaky' }],
        ['GET', `/keys/${issued.id}`, undefined],
        ['POST', `/keys/${issued.id}/revoke`, undefined],
        ['GET', '/usage', undefined],
      ] as const) {
        const answer = await adminCall(gateway, method, path, body, issued.key);
        expect({ path, status: answer.status }).toEqual({ path, status: 403 });
        expect(answer.body.error).toMatchObject({ type: 'permission_error', code: 'admin_only' });
      }
    }
    expect((await adminCall(instanceA, 'GET', `/keys/${issued.id}`)).body).toMatchObject({ status: 'active' });
  });

  it('stops a key revoked on instance A on instance B within 1 s (Redis pub/sub)', async () => {
    const issued = await createVirtualKey(instanceA, { name: 'e2e-revoke' });
    // Warm: every worker of B (and A) has the key in its in-process cache.
    for (let index = 0; index < 8; index++) {
      expect(await chatStatus(instanceB, issued.key)).toBe(200);
      expect(await chatStatus(instanceA, issued.key)).toBe(200);
    }
    const revokeSentAt = performance.now();
    const revoked = await adminCall(instanceA, 'POST', `/keys/${issued.id}/revoke`);
    const revokedAt = performance.now();
    expect(revoked.body).toMatchObject({ status: 'revoked', version: issued.version + 1 });
    const propagationMs = await timeUntilRefused(instanceB, issued.key, revokedAt);
    console.log(
      `revocation propagation to instance B: ${propagationMs.toFixed(1)} ms after the revoke answered ` +
        `(${(revokedAt - revokeSentAt).toFixed(1)} ms for the revoke call itself)`,
    );
    expect(propagationMs).toBeLessThanOrEqual(1_000);
    const refusal = await rawChat(instanceB, issued.key);
    expect(refusal.status).toBe(401);
    expect(refusal.body.error).toMatchObject({ type: 'invalid_request_error' });
    const sdkRefusal = await complete(instanceB, issued.key, false).catch((error: unknown) => error);
    expect(sdkRefusal).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(await chatStatus(instanceA, issued.key)).toBe(401);
  });

  it('rotates a key: the old secret stops on both instances, the new one works on both', async () => {
    const issued = await createVirtualKey(instanceA, { name: 'e2e-rotate' });
    for (let index = 0; index < 6; index++) {
      expect(await chatStatus(instanceA, issued.key)).toBe(200);
      expect(await chatStatus(instanceB, issued.key)).toBe(200);
    }
    const rotated = await adminCall(instanceA, 'POST', `/keys/${issued.id}/rotate`);
    const rotatedAt = performance.now();
    expect(rotated.status).toBe(200);
    const newSecret = String(rotated.body.key);
    expect(newSecret).not.toBe(issued.key);
    expect(rotated.body).toMatchObject({ id: issued.id, status: 'active' });
    expect(Number(rotated.body.version)).toBeGreaterThan(issued.version);
    for (const gateway of [instanceA, instanceB])
      expect(await timeUntilRefused(gateway, issued.key, rotatedAt)).toBeLessThanOrEqual(1_000);
    for (const gateway of [instanceA, instanceB]) {
      for (const stream of [false, true]) expect(await complete(gateway, newSecret, stream)).toBe(expectedText);
    }
  });
});
