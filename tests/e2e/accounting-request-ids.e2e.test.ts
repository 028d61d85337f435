import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { createEmptyTestDatabase } from '../services/test-database.ts';
import {
  createVirtualKey,
  pricedRequestCostUsd,
  rawChat,
  requiredServiceUrl,
  startAccountingGateway,
  waitFor,
} from './accounting-harness.ts';

interface LedgerRow {
  request_id: string;
  client_request_id: string | null;
  key_id: string | null;
  cost_usd: number;
}

// Defect 3 of the hardening issue: the ledger was keyed by the client's `x-request-id`, so 50 requests sent with one
// id left one row, a client could erase another key's rows by reusing their ids, and a key that overspent its budget
// was admitted again after a restart because the ledger held one row for many requests.
describe(
  'ledger rows are keyed by the gateway, not by the client (cluster of 2, Postgres)',
  { timeout: 120_000 },
  () => {
    let mock: MockUpstream;
    let database: { url: string; drop(): Promise<void> };
    let sql: postgres.Sql;

    const rowsOfClientId = async (clientRequestId: string): Promise<LedgerRow[]> =>
      await sql<LedgerRow[]>`select request_id, client_request_id, key_id, cost_usd from usage_events
      where client_request_id = ${clientRequestId}`;

    beforeAll(async () => {
      requiredServiceUrl('TORII_TEST_DATABASE_URL');
      mock = await startMockUpstream();
      database = await createEmptyTestDatabase();
      sql = postgres(database.url, { max: 1, onnotice: () => {} });
    });

    afterAll(async () => {
      await sql?.end({ timeout: 5 });
      await mock?.close();
      await database?.drop();
    });

    it('writes one row per request whatever x-request-id clients send, and never lets one key erase another', async () => {
      const gateway = await startAccountingGateway({ mockUrl: mock.url, databaseUrl: database.url });
      try {
        const alice = await createVirtualKey(gateway, { name: 'alice' });
        const mallory = await createVirtualKey(gateway, { name: 'mallory' });
        const sharedId = `shared-${crypto.randomUUID()}`;
        const gatewayIds = new Set<string>();
        for (let index = 0; index < 50; index++) {
          const answer = await rawChat(gateway, alice.key, undefined, { 'x-request-id': sharedId });
          expect(answer.status).toBe(200);
          // The client's id is echoed; the gateway's own id, the ledger's key, is new for every request.
          expect(answer.headers.get('x-request-id')).toBe(sharedId);
          gatewayIds.add(String(answer.headers.get('x-torii-request-id')));
        }
        expect(gatewayIds.size).toBe(50);
        await waitFor(
          '50 ledger rows for the shared client id',
          async () => (await rowsOfClientId(sharedId)).length === 50,
          30_000,
        );
        // Another key reusing the same ids (and the gateway ids it saw in the headers) adds its own rows only.
        for (const reused of [sharedId, ...[...gatewayIds].slice(0, 5)]) {
          const answer = await rawChat(gateway, mallory.key, undefined, { 'x-request-id': reused });
          expect(answer.status).toBe(200);
        }
        await waitFor("the other key's rows", async () => (await rowsOfClientId(sharedId)).length === 51, 30_000);
        const rows = await rowsOfClientId(sharedId);
        expect(rows.filter((row) => row.key_id === alice.id)).toHaveLength(50);
        expect(new Set(rows.map((row) => row.request_id)).size).toBe(51);
        const [counted] = await sql<{ count: number }[]>`select count(*)::int as count from usage_events
        where request_id = any(${[...gatewayIds]}) and key_id = ${alice.id}`;
        expect(counted?.count).toBe(50);
      } finally {
        await gateway.stop();
      }
    });

    it('keeps refusing a key that spent past its budget after a restart, whatever ids its requests carried', async () => {
      let gateway = await startAccountingGateway({ mockUrl: mock.url, databaseUrl: database.url });
      let key: Awaited<ReturnType<typeof createVirtualKey>>;
      const clientId = `budget-${crypto.randomUUID()}`;
      try {
        key = await createVirtualKey(gateway, { name: 'budgeted', budget: { amount_usd: 0.5, period: 'total' } });
        let admitted = 0;
        for (let index = 0; index < 20; index++) {
          const answer = await rawChat(
            gateway,
            key.key,
            { model: 'gpt-priced', messages: [{ role: 'user', content: 'hi' }] },
            {
              'x-request-id': clientId,
            },
          );
          if (answer.status === 200) admitted++;
          else {
            expect(answer.body).toMatchObject({ error: { code: 'budget_exceeded' } });
            break;
          }
        }
        expect(admitted * pricedRequestCostUsd).toBeGreaterThanOrEqual(0.5);
        await waitFor(
          'every admitted request in the ledger',
          // The refused request has its row too (status 429, no cost); the admitted ones carry the spend.
          async () => (await rowsOfClientId(clientId)).filter((row) => row.cost_usd > 0).length === admitted,
          30_000,
        );
      } finally {
        await gateway.stop();
      }
      // A new process knows the spend only from the ledger.
      gateway = await startAccountingGateway({ mockUrl: mock.url, databaseUrl: database.url });
      try {
        const answer = await rawChat(gateway, key.key, {
          model: 'gpt-priced',
          messages: [{ role: 'user', content: 'hi' }],
        });
        expect(answer.status).toBe(429);
        expect(answer.body).toMatchObject({ error: { code: 'budget_exceeded' } });
      } finally {
        await gateway.stop();
      }
    });
  },
);
