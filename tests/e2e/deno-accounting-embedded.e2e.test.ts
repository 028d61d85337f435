import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { accountingMasterKey, adminCall, createVirtualKey, openaiClient, rawChat } from './accounting-harness.ts';
import { startDenoAccountingGateway } from './deno-accounting-harness.ts';
import { readFixture } from './e2e-fixtures.ts';

const expectedText = readFixture<{ choices: { message: { content: string } }[] }>('openai-compatible', 'text.json')
  .choices[0]?.message.content;

// The Deno server with no DATABASE_URL: the embedded database on local disk, as `deno task start` runs it (SQLite by
// default, PGlite with TORII_DATABASE=pglite).
const engines = [
  { engine: 'sqlite', label: 'SQLite (the embedded default)', environment: {}, file: 'torii.sqlite', name: 'SQLite' },
  { engine: 'pglite', label: 'PGlite', environment: { TORII_DATABASE: 'pglite' }, file: 'pglite', name: 'PGlite' },
] as const;

describe.each(engines)('the Deno server on $label', { timeout: 120_000 }, ({ engine, environment, file, name }) => {
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
  });

  afterAll(async () => {
    await mock?.close();
  });

  it('keeps keys and the usage ledger on disk across a restart; SIGTERM flushes the ledger', async () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), `torii-e2e-deno-${engine}-`));
    const first = await startDenoAccountingGateway({ mockUrl: mock.url, dataDirectory, environment });
    let issued: Awaited<ReturnType<typeof createVirtualKey>>;
    try {
      expect(first.output()).toContain(`"database":"${engine}"`);
      issued = await createVirtualKey(first, { name: `deno-${engine}`, rpm_limit: 100 });
      const client = openaiClient(first, issued.key);
      for (let index = 0; index < 3; index++) {
        const completion = await client.chat.completions.create({
          model: 'gpt-text',
          messages: [{ role: 'user', content: 'hello' }],
        });
        expect(completion.choices[0]?.message.content).toBe(expectedText);
      }
    } finally {
      expect(await first.stop()).toBe(0);
    }
    expect(readdirSync(dataDirectory)).toContain(file);

    const second = await startDenoAccountingGateway({ mockUrl: mock.url, dataDirectory, environment });
    try {
      // The three requests, written to the ledger at SIGTERM (the queue's 1 s batch delay had not passed for all).
      const report = await adminCall(second, 'GET', `/usage?key_id=${issued.id}&group_by=key`);
      expect(report.status).toBe(200);
      expect(report.body.data).toEqual([expect.objectContaining({ key_id: issued.id, requests: 3 })]);
      expect((await rawChat(second, issued.key)).status).toBe(200);
      expect((await adminCall(second, 'GET', `/keys/${issued.id}`)).body).toMatchObject({ rpm_limit: 100 });
    } finally {
      await second.stop();
    }
  });

  it('serves the master key only, saying why, when it may not write its data directory', async () => {
    const gateway = await startDenoAccountingGateway({
      mockUrl: mock.url,
      permissions: ['--allow-net', '--allow-env', '--allow-read'],
      environment,
    });
    try {
      expect(gateway.output()).toMatch(/"level":"error","message":"no database: serving the master key only/);
      expect(gateway.output()).toContain(`${name} needs write access`);
      expect(gateway.output()).toContain('"database":"none"');
      expect((await rawChat(gateway, accountingMasterKey)).status).toBe(200);
      expect((await adminCall(gateway, 'POST', '/keys', { name: 'nowhere' })).status).toBe(404);
    } finally {
      expect(await gateway.stop()).toBe(0);
    }
  });
});

describe('the Deno server with TORII_DATABASE=off', { timeout: 120_000 }, () => {
  it('opens no database, writes nothing to its data directory, and serves the master key only', async () => {
    const mock = await startMockUpstream();
    const dataDirectory = mkdtempSync(join(tmpdir(), 'torii-e2e-deno-off-'));
    const gateway = await startDenoAccountingGateway({
      mockUrl: mock.url,
      dataDirectory,
      environment: { TORII_DATABASE: 'off' },
    });
    try {
      expect(gateway.output()).toContain('TORII_DATABASE=off');
      expect(gateway.output()).toContain('"database":"none"');
      expect((await rawChat(gateway, accountingMasterKey)).status).toBe(200);
      expect((await adminCall(gateway, 'POST', '/keys', { name: 'nowhere' })).status).toBe(404);
      expect(readdirSync(dataDirectory)).toEqual([]);
    } finally {
      expect(await gateway.stop()).toBe(0);
      await mock.close();
    }
  });
});
