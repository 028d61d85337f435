import { hash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinProviders } from '../../providers/index.ts';
import { createKeyAdministration } from '../../src/auth/key-administration.ts';
import { createLocalKeyInvalidationBus } from '../../src/auth/local-key-invalidation-bus.ts';
import { createVirtualKeyAuthenticator } from '../../src/auth/virtual-key-authenticator.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { createDrizzleKeyStore } from '../../src/db/drizzle-key-store.ts';
import { createDrizzleUsageQuery } from '../../src/db/drizzle-usage-query.ts';
import { createDrizzleUsageSink } from '../../src/db/drizzle-usage-sink.ts';
import { createGateway } from '../../src/gateway.ts';
import { createTestPglite, type TestDatabase } from '../services/test-database.ts';

const masterKey = 'sk-admin-test-master';
const sha256 = (text: string) => hash('sha256', text, 'buffer');
/** PGlite takes seconds to start on a busy machine: the hooks wait for it far longer than vitest's 10 s default. */
const hookTimeoutMs = 120_000;

describe('admin API (createGateway over a real Drizzle store on PGlite)', () => {
  let database: TestDatabase;
  let gateway: ReturnType<typeof createGateway>;

  const call = async (method: string, path: string, body?: unknown, key = masterKey) => {
    const response = await gateway.request(path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    // The test reads arbitrary JSON answers field by field; every field it reads is asserted.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: response.status, json: (await response.json()) as Record<string, any> };
  };

  beforeAll(async () => {
    database = await createTestPglite();
    const store = createDrizzleKeyStore(database.db);
    const invalidations = createLocalKeyInvalidationBus();
    const config = parseGatewayConfig(
      {
        modelGroups: {
          fast: { deployments: [{ provider: 'openai', model: 'gpt-4o-mini', apiKey: 'sk-upstream' }] },
          smart: { deployments: [{ provider: 'openai', model: 'gpt-4o', apiKey: 'sk-upstream' }] },
        },
      },
      {},
    );
    const usageSink = createDrizzleUsageSink(database.db);
    const day = Date.parse('2026-11-20T12:00:00Z');
    await usageSink.write(
      ['a', 'b', 'c'].map((suffix, index) => ({
        requestId: `request-${suffix}`,
        keyId: index < 2 ? 'key_report' : null,
        modelGroup: 'fast',
        provider: 'openai',
        deployment: 'fast/0',
        upstreamModel: 'gpt-4o-mini',
        operation: 'chat',
        inputTokens: 100,
        outputTokens: 10,
        cachedInputTokens: 0,
        reasoningTokens: 0,
        usageSource: 'provider' as const,
        costUsd: 0.5,
        status: 200,
        stream: false,
        latencyMs: 12,
        timeToFirstTokenMs: null,
        overheadMs: 0.2,
        startedAt: day + index * 86_400_000,
        finishedAt: day + index * 86_400_000 + 12,
      })),
    );
    gateway = createGateway({
      config,
      providers: builtinProviders,
      authenticator: createVirtualKeyAuthenticator({ masterKey, store, invalidations, sha256 }),
      administration: {
        keys: createKeyAdministration({ store, invalidations, sha256 }),
        usage: createDrizzleUsageQuery(database.db),
      },
    });
  }, hookTimeoutMs);
  afterAll(async () => {
    await database?.drop();
  }, hookTimeoutMs);

  it('creates a key, shows the secret once, and lists and gets it by prefix only', async () => {
    const created = await call('POST', '/admin/keys', {
      name: 'ci',
      team: 'platform',
      metadata: { purpose: 'tests' },
      allowed_model_groups: ['fast'],
      rpm_limit: 60,
      tpm_limit: 100_000,
      budget: { amount_usd: 25, period: 'month' },
      expires_at: '2099-01-01T00:00:00Z',
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      object: 'virtual_key',
      name: 'ci',
      status: 'active',
      team: 'platform',
      allowed_model_groups: ['fast'],
      rpm_limit: 60,
      budget: { amount_usd: 25, period: 'month' },
      expires_at: '2099-01-01T00:00:00.000Z',
      version: 1,
    });
    expect(created.json.key).toMatch(/^sk-torii-/);
    expect(created.json.key.startsWith(created.json.key_prefix)).toBe(true);
    const fetched = await call('GET', `/admin/keys/${created.json.id}`);
    expect(fetched.json.key).toBeUndefined();
    expect(fetched.json.key_prefix).toBe(created.json.key_prefix);
    const listed = await call('GET', '/admin/keys?team=platform');
    expect(listed.json.data.map((key: { id: string }) => key.id)).toContain(created.json.id);
    expect(JSON.stringify(listed.json)).not.toContain(created.json.key);
  });

  it('a bad request is a 400 naming the field, and changes nothing', async () => {
    const { json: key } = await call('POST', '/admin/keys', { name: 'stable', rpm_limit: 10 });
    const attempts: [string, unknown, string | null][] = [
      ['PATCH', { rpm_limt: 5 }, 'rpm_limt'],
      ['PATCH', { rpm_limit: -1 }, 'rpm_limit'],
      ['PATCH', { rpm_limit: 1.5 }, 'rpm_limit'],
      ['PATCH', { allowed_model_groups: ['fast', 'nope'] }, 'allowed_model_groups.[1]'],
      ['PATCH', { expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
      ['PATCH', { budget: { amount_usd: 0, period: 'month' } }, 'budget.amount_usd'],
      ['PATCH', { budget: { amount_usd: 5, period: 'year' } }, 'budget.period'],
      ['PATCH', {}, null],
      ['PATCH', '{"name":', null],
    ];
    for (const [method, body, param] of attempts) {
      const answer = await call(method, `/admin/keys/${key.id}`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.json.error.type).toBe('invalid_request_error');
      expect(answer.json.error.param).toBe(param);
    }
    const create = await call('POST', '/admin/keys', { name: '' });
    expect(create.status).toBe(400);
    expect(create.json.error.param).toBe('name');
    const after = await call('GET', `/admin/keys/${key.id}`);
    expect(after.json).toMatchObject({ version: 1, rpm_limit: 10, allowed_model_groups: null, expires_at: null });
  });

  it('updates, disables, rotates and revokes, bumping the version each time', async () => {
    const { json: key } = await call('POST', '/admin/keys', { name: 'life' });
    const updated = await call('PATCH', `/admin/keys/${key.id}`, { name: 'life-2', rpm_limit: null, disabled: true });
    expect(updated.json).toMatchObject({ name: 'life-2', status: 'disabled', version: 2 });
    const rotated = await call('POST', `/admin/keys/${key.id}/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.json.key).not.toBe(key.key);
    expect(rotated.json.version).toBe(3);
    const revoked = await call('DELETE', `/admin/keys/${key.id}`);
    expect(revoked.json).toMatchObject({ status: 'revoked', version: 4 });
    expect(revoked.json.revoked_at).not.toBeNull();
    const rotateRevoked = await call('POST', `/admin/keys/${key.id}/rotate`);
    expect(rotateRevoked.status).toBe(409);
    expect(rotateRevoked.json.error.code).toBe('key_revoked');
  });

  it('answers 404 for unknown keys and 403 to virtual keys', async () => {
    const missing = await call('GET', '/admin/keys/key_doesnotexist');
    expect(missing.status).toBe(404);
    expect(missing.json.error).toMatchObject({ code: 'key_not_found', type: 'invalid_request_error' });
    const { json: key } = await call('POST', '/admin/keys', { name: 'not-admin' });
    const forbidden = await call('GET', '/admin/keys', undefined, key.key);
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.error).toMatchObject({ type: 'permission_error', code: 'admin_only' });
    const anonymous = await gateway.request('/admin/keys');
    expect(anonymous.status).toBe(401);
  });

  it('pages through keys newest first with a cursor', async () => {
    for (let index = 0; index < 5; index++)
      await call('POST', '/admin/keys', { name: `page-${index}`, owner: 'pager' });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `/admin/keys?owner=pager&limit=2${cursor === null ? '' : `&cursor=${cursor}`}`;
      const page = await call('GET', query);
      expect(page.json.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.json.data.map((key: { name: string }) => key.name));
      cursor = page.json.next_cursor;
      expect(page.json.has_more).toBe(cursor !== null);
    } while (cursor !== null);
    expect(seen).toEqual(['page-4', 'page-3', 'page-2', 'page-1', 'page-0']);
    const badLimit = await call('GET', '/admin/keys?limit=500');
    expect(badLimit.status).toBe(400);
    expect(badLimit.json.error.param).toBe('limit');
  });

  it('reports usage and spend grouped by key and day over a range', async () => {
    const report = await call(
      'GET',
      '/admin/usage?from=2026-11-19T00:00:00Z&to=2026-11-25T00:00:00Z&group_by=key,day&key_id=key_report',
    );
    expect(report.status).toBe(200);
    expect(report.json.data).toEqual([
      expect.objectContaining({ key_id: 'key_report', day: '2026-11-20', requests: 1, cost_usd: 0.5 }),
      expect.objectContaining({ key_id: 'key_report', day: '2026-11-21', requests: 1, input_tokens: 100 }),
    ]);
    const totals = await call('GET', '/admin/usage?from=2026-11-19T00:00:00Z&to=2026-11-25T00:00:00Z');
    expect(totals.json.data).toEqual([expect.objectContaining({ requests: 3, cost_usd: 1.5, output_tokens: 30 })]);
    const backwards = await call('GET', '/admin/usage?from=2026-11-25T00:00:00Z&to=2026-11-19T00:00:00Z');
    expect(backwards.status).toBe(400);
    const badGroup = await call('GET', '/admin/usage?group_by=color');
    expect(badGroup.status).toBe(400);
    expect(badGroup.json.error.param).toBe('group_by');
  });
});
