import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import {
  createVirtualKey,
  ledgerRowCounts,
  openaiClient,
  rawChat,
  requiredServiceUrl,
  sleep,
  startAccountingGateway,
  waitFor,
} from './accounting-harness.ts';
import { startLoad } from './accounting-load.ts';
import { startRestartablePostgres, type RestartablePostgres } from './accounting-postgres.ts';
import type { RunningGateway } from './gateway-process.ts';

const outageMs = 30_000;

// A Postgres of the test's own, stopped for 30 s under load: requests keep succeeding (the key is cached) and once
// the database is back the usage queue drains into it, one row per successful request.
describe('the usage ledger through a Postgres outage (cluster of 2, Redis)', { timeout: 110_000 }, () => {
  let mock: MockUpstream;
  let database: RestartablePostgres;
  let gateway: RunningGateway;

  beforeAll(async () => {
    const redisUrl = requiredServiceUrl('TORII_TEST_REDIS_URL');
    mock = await startMockUpstream();
    database = await startRestartablePostgres();
    gateway = await startAccountingGateway({ mockUrl: mock.url, databaseUrl: database.url, redisUrl });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
    await database?.destroy();
  });

  it(`keeps serving with Postgres stopped for ${outageMs / 1000} s, then writes exactly one row per success`, async () => {
    const { key } = await createVirtualKey(gateway, { name: 'e2e-outage' });
    // Warm: every worker has the key in memory, and Redis has it.
    for (let index = 0; index < 8; index++) expect((await rawChat(gateway, key)).status).toBe(200);
    const idPrefix = `outage-${crypto.randomUUID()}`;
    const load = startLoad({
      client: openaiClient(gateway, key, { reuseConnections: true }),
      idPrefix,
      concurrency: 4,
      pauseMs: 25,
      streamEvery: 5,
    });
    await sleep(3_000);
    await database.stop();
    const stoppedAt = performance.now();
    await sleep(outageMs);
    await database.start();
    const restartedAt = performance.now();
    await sleep(2_000);
    await load.stop();

    const succeeded = load.requests.filter((request) => request.succeeded);
    const failed = load.requests.filter((request) => !request.succeeded);
    let counts = new Map<string, number>();
    await waitFor(
      'the usage queue to drain into Postgres',
      async () => {
        counts = await ledgerRowCounts(database.url, idPrefix);
        return succeeded.every((request) => counts.has(request.requestId));
      },
      60_000,
      250,
    );
    const drainedMs = performance.now() - restartedAt;
    const servedDuringOutage = succeeded.filter(
      (request) => request.sentAt >= stoppedAt && request.finishedAt <= restartedAt,
    ).length;
    console.log(
      `Postgres outage: ${load.requests.length} requests (${servedDuringOutage} served while Postgres was down for ` +
        `${((restartedAt - stoppedAt) / 1000).toFixed(1)} s), ${failed.length} failed; ledger complete ` +
        `${(drainedMs / 1000).toFixed(1)} s after Postgres came back; ${counts.size} rows`,
    );
    expect(failed.map((request) => request.error)).toEqual([]);
    expect(servedDuringOutage).toBeGreaterThan(100);
    const sent = new Set(load.requests.map((request) => request.requestId));
    expect([...counts].filter(([, rows]) => rows !== 1)).toEqual([]);
    expect([...counts.keys()].filter((requestId) => !sent.has(requestId))).toEqual([]);
    expect(counts.size).toBe(succeeded.length);
    // The retry backoff is capped at 5 s, so the ledger catches up within a few seconds of the database's return
    // (with the old 30 s cap it took 17-19 s).
    expect(drainedMs).toBeLessThan(12_000);
  });
});
