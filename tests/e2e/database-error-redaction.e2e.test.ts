import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { createEmptyTestDatabase } from '../services/test-database.ts';
import {
  accountingMasterKey,
  adminCall,
  createVirtualKey,
  rawChat,
  startAccountingGateway,
} from './accounting-harness.ts';
import type { RunningGateway } from './gateway-process.ts';

// Defect: database errors were logged with their query parameters. Drizzle's error message ends with
// "params: <every parameter>" (key hashes, customer metadata, usage rows), and the admin API's unhandled-error log
// line printed it whole. Real failing queries (the tables renamed away under a running gateway) whose parameters
// carry a marker must leave no trace of the marker in anything the gateway prints.
describe.each([
  { name: 'a single process', workers: 1 },
  { name: 'a cluster of 2', workers: 2 },
])('database errors in the log of $name', { timeout: 120_000 }, ({ workers }) => {
  let mock: MockUpstream;
  let database: { url: string; drop(): Promise<void> };
  let gateway: RunningGateway;

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createEmptyTestDatabase();
    gateway = await startAccountingGateway({
      mockUrl: mock.url,
      databaseUrl: database.url,
      workers,
      environment: { TORII_DATA_DIR_MIN_FREE_BYTES: '0' },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
    await database?.drop();
  });

  it('never prints the parameters of a failing query', async () => {
    const marker = `MARKER-${crypto.randomUUID()}`;
    const { id, key } = await createVirtualKey(gateway, { name: 'redaction', metadata: { customer: 'before' } });
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      await sql`alter table virtual_keys rename to virtual_keys_away`;
      await sql`alter table usage_events rename to usage_events_away`;
      // Creating and updating keys: the metadata (and the new key's hash) are parameters of the failing statements.
      const created = await adminCall(gateway, 'POST', '/keys', {
        name: 'redaction-2',
        metadata: { customer: marker },
      });
      expect(created.status).toBeGreaterThanOrEqual(500);
      const updated = await adminCall(gateway, 'PATCH', `/keys/${id}`, { metadata: { customer: marker } });
      expect(updated.status).toBeGreaterThanOrEqual(500);
      // A key lookup that fails (its hash is the parameter), and usage rows that cannot be written.
      expect((await rawChat(gateway, key)).status).toBe(503);
      expect(gateway.output()).not.toContain(marker);
      for (let index = 0; index < 3; index++) expect((await rawChat(gateway, accountingMasterKey)).status).toBe(200);
      await waitForOutput(gateway, /usage ledger writes are failing/);
    } finally {
      await sql`alter table if exists virtual_keys_away rename to virtual_keys`.catch(() => {});
      await sql`alter table if exists usage_events_away rename to usage_events`.catch(() => {});
      await sql.end({ timeout: 5 });
    }
    const output = gateway.output();
    const keyHash = await sha256Hex(key);
    expect(output).toMatch(/database error 42P01/);
    expect(output).not.toContain(marker);
    expect(output).not.toContain(keyHash);
    expect(output).not.toMatch(/params:/);
  });
});

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return [...digest].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Waits until the gateway printed a line matching `pattern` (the usage queue logs its failures within seconds). */
async function waitForOutput(gateway: RunningGateway, pattern: RegExp, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(gateway.output())) {
    if (Date.now() > deadline) throw new Error(`no output line matched ${pattern} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
