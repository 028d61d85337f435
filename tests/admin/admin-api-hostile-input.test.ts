import { hash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinProviders } from '../../providers/index.ts';
import { createKeyAdministration } from '../../src/auth/key-administration.ts';
import { createLocalKeyInvalidationBus } from '../../src/auth/local-key-invalidation-bus.ts';
import { createVirtualKeyAuthenticator } from '../../src/auth/virtual-key-authenticator.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { createDrizzleKeyStore } from '../../src/db/drizzle-key-store.ts';
import { createDrizzleUsageQuery } from '../../src/db/drizzle-usage-query.ts';
import { encodeKeyListCursor } from '../../src/db/key-list-cursor.ts';
import { createGateway } from '../../src/gateway.ts';
import { openPostgresDatabase } from '../../adapters/shared/database-open.ts';
import { startTestPostgres, type TestPostgresServer } from '../services/postgres-server.ts';
import { testDatabaseDrivers, type TestDatabase } from '../services/test-database.ts';
import type { ToriiDatabase } from '../../src/db/database.ts';

/**
 * Issue 8, item 12: nothing a client sends to the admin API may answer 500 or change anything half-way. Every hostile
 * input here answers a 4xx naming the field (or, for a key id that cannot exist, 404), and the keys are the same
 * afterwards; with the database down, every call answers 503 saying so. Real Drizzle stores on the real Postgres
 * server and on PGlite.
 */

const masterKey = 'sk-admin-hostile-master';
const sha256 = (text: string) => hash('sha256', text, 'buffer');
const hookTimeoutMs = 120_000;

function adminGateway(db: ToriiDatabase) {
  const store = createDrizzleKeyStore(db);
  const invalidations = createLocalKeyInvalidationBus();
  const config = parseGatewayConfig(
    { modelGroups: { fast: { deployments: [{ provider: 'openai', model: 'gpt-4o-mini', apiKey: 'sk-upstream' }] } } },
    {},
  );
  const gateway = createGateway({
    config,
    providers: builtinProviders,
    authenticator: createVirtualKeyAuthenticator({ masterKey, store, invalidations, sha256 }),
    administration: {
      keys: createKeyAdministration({ store, invalidations, sha256 }),
      usage: createDrizzleUsageQuery(db),
    },
  });
  return async (method: string, path: string, body?: unknown) => {
    const response = await gateway.request(path, {
      method,
      headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    // The answers are read field by field below; every field read is asserted.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: response.status, json: JSON.parse(text) as Record<string, any>, headers: response.headers };
  };
}

/** A cursor in the API's own encoding around a position it never returns. */
const forgedCursor = (createdAt: number, id: string) => encodeKeyListCursor({ createdAt, id });

/** [what, method, path (KEY is the test key's id), body, status, param]. */
type HostileCase = [string, string, string, unknown, number, string | null];

const bodyCases = (method: 'POST' | 'PATCH', path: string): HostileCase[] => [
  [`${method} name with NUL`, method, path, { name: 'a\u0000b' }, 400, 'name'],
  [`${method} name with a lone high surrogate`, method, path, { name: 'a\ud800b' }, 400, 'name'],
  [`${method} name with a lone low surrogate`, method, path, { name: '\udc00' }, 400, 'name'],
  [`${method} name with a control character`, method, path, { name: 'a\u0007b' }, 400, 'name'],
  [`${method} name with a line break`, method, path, { name: 'a\nb' }, 400, 'name'],
  [`${method} name with DEL`, method, path, { name: 'a\u007fb' }, 400, 'name'],
  [`${method} name with a C1 control`, method, path, { name: 'a\u009bb' }, 400, 'name'],
  [`${method} name of 100,000 characters`, method, path, { name: 'n'.repeat(100_000) }, 400, 'name'],
  [`${method} owner with NUL`, method, path, { name: 'x', owner: '\u0000' }, 400, 'owner'],
  [`${method} team with a lone surrogate`, method, path, { name: 'x', team: 'a\ud83d' }, 400, 'team'],
  [
    `${method} metadata value with NUL`,
    method,
    path,
    { name: 'x', metadata: { note: 'a\u0000' } },
    400,
    'metadata.note',
  ],
  [
    `${method} metadata value with a lone surrogate`,
    method,
    path,
    { name: 'x', metadata: { note: '\udfff' } },
    400,
    'metadata.note',
  ],
  [
    `${method} metadata key with NUL`,
    method,
    path,
    { name: 'x', metadata: { 'a\u0000': 'v' } },
    400,
    'metadata.a\u0000',
  ],
  [
    `${method} metadata key with a lone surrogate`,
    method,
    path,
    { name: 'x', metadata: { '\ud800': 'v' } },
    400,
    'metadata.\ud800',
  ],
  [
    `${method} nested metadata`,
    method,
    path,
    { name: 'x', metadata: { note: { deeper: ['x'] } } },
    400,
    'metadata.note',
  ],
  [
    `${method} a huge metadata value`,
    method,
    path,
    { name: 'x', metadata: { note: 'v'.repeat(1_000_000) } },
    400,
    'metadata.note',
  ],
  [
    `${method} too many metadata entries`,
    method,
    path,
    { name: 'x', metadata: Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`k${index}`, 'v'])) },
    400,
    'metadata',
  ],
  [
    `${method} deeply nested JSON`,
    method,
    path,
    `{"name":"x","metadata":{"note":${'['.repeat(100_000)}`,
    400,
    'metadata.note.[0].[0].[0].[0].….[0].[0]',
  ],
  [
    `${method} a model group with NUL`,
    method,
    path,
    { name: 'x', allowed_model_groups: ['\u0000'] },
    400,
    'allowed_model_groups.[0]',
  ],
  [
    `${method} an infinite budget`,
    method,
    path,
    `{"name":"x","budget":{"amount_usd":1e999,"period":"day"}}`,
    400,
    'budget.amount_usd',
  ],
  [`${method} a huge rpm_limit`, method, path, { name: 'x', rpm_limit: 1e300 }, 400, 'rpm_limit'],
  [`${method} a negative tpm_limit`, method, path, { name: 'x', tpm_limit: -1 }, 400, 'tpm_limit'],
  [
    `${method} expires_at in year 0`,
    method,
    path,
    { name: 'x', expires_at: '0000-01-01T00:00:00Z' },
    400,
    'expires_at',
  ],
  [`${method} an array body`, method, path, '[{"name":"x"}]', 400, null],
];

const cases: HostileCase[] = [
  ...bodyCases('POST', '/admin/keys'),
  ...bodyCases('PATCH', '/admin/keys/KEY'),
  ['owner=%00', 'GET', '/admin/keys?owner=%00', undefined, 400, 'owner'],
  ['team with a control character', 'GET', '/admin/keys?team=a%01', undefined, 400, 'team'],
  ['a cursor that is not base64url', 'GET', '/admin/keys?cursor=%00', undefined, 400, 'cursor'],
  ['a cursor holding NUL', 'GET', `/admin/keys?cursor=${forgedCursor(1, '\u0000')}`, undefined, 400, 'cursor'],
  ['a cursor past the last date', 'GET', `/admin/keys?cursor=${forgedCursor(9e15, 'key_x')}`, undefined, 400, 'cursor'],
  ['a cursor of 10,000 characters', 'GET', `/admin/keys?cursor=${'A'.repeat(10_000)}`, undefined, 400, 'cursor'],
  ['limit=abc', 'GET', '/admin/keys?limit=abc', undefined, 400, 'limit'],
  ['limit=-1', 'GET', '/admin/keys?limit=-1', undefined, 400, 'limit'],
  ['limit=0', 'GET', '/admin/keys?limit=0', undefined, 400, 'limit'],
  ['a huge limit', 'GET', '/admin/keys?limit=99999999999999999999999', undefined, 400, 'limit'],
  ['limit as an array', 'GET', '/admin/keys?limit[]=5', undefined, 400, 'limit[]'],
  ['GET /admin/keys/%00', 'GET', '/admin/keys/%00', undefined, 404, 'id'],
  ['PATCH /admin/keys/%00', 'PATCH', '/admin/keys/%00', { name: 'x' }, 404, 'id'],
  ['DELETE /admin/keys/%00', 'DELETE', '/admin/keys/%00', undefined, 404, 'id'],
  ['revoke /admin/keys/%00', 'POST', '/admin/keys/%00/revoke', undefined, 404, 'id'],
  ['rotate /admin/keys/%00', 'POST', '/admin/keys/%00/rotate', undefined, 404, 'id'],
  ['an id of invalid UTF-8', 'GET', '/admin/keys/%ED%A0%80', undefined, 404, 'id'],
  ['an id of 10,000 characters', 'GET', `/admin/keys/${'k'.repeat(10_000)}`, undefined, 404, 'id'],
  [
    'usage from year 0',
    'GET',
    '/admin/usage?from=0000-01-01T00:00:00Z&to=0000-01-02T00:00:00Z',
    undefined,
    400,
    'from',
  ],
  ['usage from a date without a time', 'GET', '/admin/usage?from=0000-01-01', undefined, 400, 'from'],
  ['usage to year 0', 'GET', '/admin/usage?to=0000-01-02T00:00:00Z', undefined, 400, 'to'],
  ['usage key_id=%00', 'GET', '/admin/usage?key_id=%00', undefined, 400, 'key_id'],
  ['usage group_by as an array', 'GET', '/admin/usage?group_by[]=key', undefined, 400, 'group_by[]'],
];

describe.each(testDatabaseDrivers)('admin API under hostile input on $driver', ({ create }) => {
  let database: TestDatabase;
  let call: ReturnType<typeof adminGateway>;
  let keyId: string;

  const everyKey = async () => {
    const listed = await call('GET', '/admin/keys?limit=100');
    expect(listed.status).toBe(200);
    return listed.json.data;
  };

  beforeAll(async () => {
    database = await create();
    call = adminGateway(database.db);
    const created = await call('POST', '/admin/keys', { name: 'stable', owner: 'o', metadata: { note: 'n' } });
    expect(created.status).toBe(201);
    keyId = created.json.id;
  }, hookTimeoutMs);
  afterAll(async () => {
    await database?.drop();
  }, hookTimeoutMs);

  it.each(cases)(
    '%s answers a 4xx naming the field and changes nothing',
    async (_what, method, path, body, status, param) => {
      const before = await everyKey();
      const answer = await call(method, path.replace('KEY', keyId), body);
      expect({ status: answer.status, param: answer.json.error?.param }).toEqual({ status, param });
      expect(answer.json.error.type).toBe('invalid_request_error');
      expect(await everyKey()).toEqual(before);
    },
  );

  it('still answers well-formed requests at the edges (far dates, Unicode, the longest values)', async () => {
    const created = await call('POST', '/admin/keys', {
      name: 'ключ 🔑 鍵',
      metadata: { emoji: '😀'.repeat(500), multiline: 'tabs\tand\nbreaks are fine in values' },
      expires_at: '9999-12-31T23:59:59Z',
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: 'ключ 🔑 鍵', expires_at: '9999-12-31T23:59:59.000Z' });
    const usage = await call('GET', '/admin/usage?from=9999-01-01T00:00:00Z&to=9999-12-31T00:00:00Z');
    expect(usage.status).toBe(200);
    const early = await call('GET', '/admin/usage?from=1970-01-01T00:00:00Z&to=1970-01-31T00:00:00Z');
    expect(early.status).toBe(200);
    const page = await call('GET', '/admin/keys?limit=100&owner=%F0%9F%94%91');
    expect(page.json).toMatchObject({ data: [], has_more: false });
    // Percent-encoding that is not UTF-8 is kept as sent (the router does not decode it): a name like any other.
    const undecodable = await call('GET', '/admin/keys?owner=%ED%A0%80');
    expect(undecodable.json).toMatchObject({ data: [], has_more: false });
  });
});

describe('admin API with the database down', () => {
  let server: TestPostgresServer;
  let call: ReturnType<typeof adminGateway>;
  let close: () => Promise<void>;
  let keyId: string;

  beforeAll(async () => {
    server = await startTestPostgres();
    const database = await openPostgresDatabase({ DATABASE_URL: server.url });
    close = database.close;
    call = adminGateway(database.db);
    const created = await call('POST', '/admin/keys', { name: 'before-outage' });
    expect(created.status).toBe(201);
    keyId = created.json.id;
    await server.stop();
  }, hookTimeoutMs);
  afterAll(async () => {
    await close?.().catch(() => {});
  }, hookTimeoutMs);

  it.each([
    ['list', 'GET', '/admin/keys', undefined, 'key_store_unavailable'],
    ['get', 'GET', '/admin/keys/KEY', undefined, 'key_store_unavailable'],
    ['create', 'POST', '/admin/keys', { name: 'during-outage' }, 'key_store_unavailable'],
    ['update', 'PATCH', '/admin/keys/KEY', { name: 'renamed' }, 'key_store_unavailable'],
    ['revoke', 'DELETE', '/admin/keys/KEY', undefined, 'key_store_unavailable'],
    ['rotate', 'POST', '/admin/keys/KEY/rotate', undefined, 'key_store_unavailable'],
    ['usage', 'GET', '/admin/usage', undefined, 'usage_ledger_unavailable'],
  ])('%s answers 503 in OpenAI’s envelope', async (_what, method, path, body, code) => {
    const answer = await call(method, path.replace('KEY', keyId), body);
    expect(answer.status).toBe(503);
    expect(answer.json).toEqual({ error: { type: 'api_error', code, param: null, message: expect.any(String) } });
  });
});
