import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateVirtualKeySecret } from '../../src/auth/virtual-key-secret.ts';
import { encodeKeyListCursor } from '../../src/db/key-list-cursor.ts';
import { adminCall, createVirtualKey, startAccountingGateway, type AdminAnswer } from './accounting-harness.ts';
import { startRestartablePostgres, type RestartablePostgres } from './accounting-postgres.ts';
import type { RunningGateway } from './gateway-process.ts';

/**
 * Issue 8, item 12, through the built Node server in cluster mode (two workers, no Redis), where the admin API's
 * store calls cross the IPC channel to the primary: hostile input is a 4xx naming the field (a cursor the primary's
 * store refuses included, which used to lose its 400 on the way back and answer 500), nothing changes, and with the
 * database gone every admin call answers 503 in OpenAI's envelope while cached keys keep working.
 */

describe('admin API of the Node cluster under hostile input and without its database', { timeout: 60_000 }, () => {
  let database: RestartablePostgres;
  let gateway: RunningGateway;

  beforeAll(async () => {
    database = await startRestartablePostgres();
    gateway = await startAccountingGateway({ mockUrl: 'http://127.0.0.1:9', databaseUrl: database.url, workers: 2 });
  }, 120_000);
  afterAll(async () => {
    await gateway?.stop();
    await database?.destroy();
  }, 120_000);

  /** Each call on a new connection, so both workers answer some. */
  const call = (method: string, path: string, body?: unknown): Promise<AdminAnswer> =>
    adminCall(gateway, method, path, body);
  const everyKey = async () => {
    const listed = await call('GET', '/keys?limit=100');
    expect(listed.status).toBe(200);
    return listed.body.data;
  };
  const models = async (apiKey: string) =>
    (await fetch(`${gateway.baseURL}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } })).status;

  it('answers hostile input with a 4xx naming the field, and changes nothing', async () => {
    const key = await createVirtualKey(gateway, { name: 'stable', owner: 'o' });
    const before = await everyKey();
    const cases: [string, string, unknown, number, string][] = [
      ['GET', '/keys?cursor=***', undefined, 400, 'cursor'],
      ['GET', `/keys?cursor=${encodeKeyListCursor({ createdAt: 1, id: '\u0000' })}`, undefined, 400, 'cursor'],
      ['GET', `/keys?cursor=${encodeKeyListCursor({ createdAt: 9e15, id: 'key_x' })}`, undefined, 400, 'cursor'],
      ['GET', '/keys?owner=%00', undefined, 400, 'owner'],
      ['GET', '/keys/%00', undefined, 404, 'id'],
      ['DELETE', '/keys/%00', undefined, 404, 'id'],
      ['PATCH', `/keys/${key.id}`, { name: 'a\u0000b' }, 400, 'name'],
      ['PATCH', `/keys/${key.id}`, { metadata: { note: '\ud800' } }, 400, 'metadata.note'],
      ['POST', '/keys', { name: 'x', owner: '\u0000' }, 400, 'owner'],
      ['GET', '/usage?from=0000-01-01T00:00:00Z&to=0000-01-02T00:00:00Z', undefined, 400, 'from'],
      ['GET', '/usage?key_id=%00', undefined, 400, 'key_id'],
    ];
    for (const [method, path, body, status, param] of cases) {
      // Twice: the two workers each answer one (new connections are spread over them).
      for (let round = 0; round < 2; round++) {
        const answer = await call(method, path, body);
        const error = answer.body.error as { param: string | null; type: string } | undefined;
        expect({ method, path, status: answer.status, param: error?.param }).toEqual({ method, path, status, param });
        expect(error?.type).toBe('invalid_request_error');
      }
    }
    expect(await everyKey()).toEqual(before);
  });

  it('answers 503 naming the outage while the database is down, and cached keys keep working', async () => {
    const cached = await createVirtualKey(gateway, { name: 'cached' });
    // Once per worker at least: in the primary's shared cache after the first.
    for (let round = 0; round < 4; round++) expect(await models(cached.key)).toBe(200);
    await database.stop();
    const outage: [string, string, unknown, string][] = [
      ['GET', '/keys', undefined, 'key_store_unavailable'],
      ['GET', `/keys/${cached.id}`, undefined, 'key_store_unavailable'],
      ['POST', '/keys', { name: 'during-outage' }, 'key_store_unavailable'],
      ['PATCH', `/keys/${cached.id}`, { rpm_limit: 5 }, 'key_store_unavailable'],
      ['POST', `/keys/${cached.id}/rotate`, undefined, 'key_store_unavailable'],
      ['GET', '/usage', undefined, 'usage_ledger_unavailable'],
    ];
    for (const [method, path, body, code] of outage) {
      const answer = await call(method, path, body);
      expect({ method, path, status: answer.status, body: answer.body }).toEqual({
        method,
        path,
        status: 503,
        body: { error: { type: 'api_error', code, param: null, message: expect.any(String) } },
      });
    }
    expect(await models(cached.key)).toBe(200);
    const unknown = await fetch(`${gateway.baseURL}/v1/models`, {
      headers: { authorization: `Bearer ${generateVirtualKeySecret().secret}` },
    });
    expect(unknown.status).toBe(503);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('key_lookup_unavailable');
  });
});
