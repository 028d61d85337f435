import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startRestartablePostgres, type RestartablePostgres } from '../e2e/accounting-postgres.ts';
import type { RunningGateway } from '../e2e/gateway-process.ts';
import { nodeClusterRuntime } from '../e2e/gateway-starters.ts';
import { chaosMasterKey } from './chaos-client.ts';
import {
  hostileEnvironment,
  hostileGatewayConfig,
  startHostileUpstream,
  type HostileUpstream,
} from './hostile-upstream.ts';
import { waitUntil } from './process-tree.ts';
import { mountTinyDisk, type TinyDisk } from './tiny-disk.ts';

// Defect: a full disk hung or lost usage silently. PGlite on a full disk spun at 100% CPU with no log line, and with
// Postgres down and the spill's disk full, tens of thousands of usage events were lost with no log line and no metric
// (usageQueue.stats() was read nowhere). Now: an error log line, Prometheus counters, /health/ready 503 while usage can
// be persisted nowhere and 200 again once it can, and the process keeps answering throughout.

/** Most usage events in memory: small, so a few dozen requests reach the spill. */
const maxQueuedEvents = 20;

async function get(gateway: RunningGateway, path: string): Promise<{ status: number; text: string }> {
  const dispatcher = new Agent({ connections: 1 });
  try {
    const response = await undiciFetch(`${gateway.baseURL}${path}`, {
      dispatcher,
      signal: AbortSignal.timeout(15_000),
    });
    return { status: response.status, text: await response.text() };
  } finally {
    await dispatcher.destroy();
  }
}

async function chat(gateway: RunningGateway): Promise<number> {
  const dispatcher = new Agent({ connections: 1 });
  try {
    const response = await undiciFetch(`${gateway.baseURL}/v1/chat/completions`, {
      method: 'POST',
      dispatcher,
      signal: AbortSignal.timeout(15_000),
      headers: { authorization: `Bearer ${chaosMasterKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/text', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await response.arrayBuffer();
    return response.status;
  } finally {
    await dispatcher.destroy();
  }
}

function metric(text: string, name: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
}

async function metrics(gateway: RunningGateway): Promise<string> {
  return (await get(gateway, '/metrics')).text;
}

/** Polls until `/health/ready` answers `status`; resolves with how long that took. */
async function readyBecomes(gateway: RunningGateway, status: number, timeoutMs: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    if ((await get(gateway, '/health/ready')).status === status) return performance.now() - started;
    if (performance.now() - started > timeoutMs)
      throw new Error(`/health/ready did not answer ${status} within ${timeoutMs} ms:\n${gateway.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Sends `count` requests; every one must be answered 200 (the gateway never hangs on its ledger). */
async function serveAll(gateway: RunningGateway, count: number): Promise<void> {
  for (let index = 0; index < count; index++) expect(await chat(gateway)).toBe(200);
}

describe('a full disk under the usage ledger (Node cluster of 2)', { timeout: 300_000 }, () => {
  let upstream: HostileUpstream | undefined;
  let gateway: RunningGateway | undefined;
  let disk: TinyDisk | undefined;
  let postgres: RestartablePostgres | undefined;

  const start = async (environment: Record<string, string>): Promise<RunningGateway> => {
    upstream ??= await startHostileUpstream();
    gateway = await nodeClusterRuntime.start(hostileGatewayConfig(upstream.url, ['text']), {
      ...hostileEnvironment,
      TORII_MASTER_KEY: chaosMasterKey,
      TORII_USAGE_QUEUE_MAX_EVENTS: String(maxQueuedEvents),
      ...environment,
    });
    return gateway;
  };

  const tearDown = async () => {
    await gateway?.stop();
    gateway = undefined;
    disk?.remove();
    disk = undefined;
    await postgres?.destroy();
    postgres = undefined;
  };

  // After each test, pass or fail: the gateway stopped, the tmpfs unmounted, the test's own Postgres removed.
  afterEach(tearDown);

  afterAll(async () => {
    await upstream?.close();
  });

  it('the embedded database (SQLite by default) on a full disk: logs, counts, turns not ready, recovers, never hangs', async () => {
    // The embedded database needs a few MB; the rest stays above the default 64 MiB reserve until the disk is filled.
    disk = mountTinyDisk('160m');
    const running = await start({ TORII_DATA_DIR: disk.path });
    await serveAll(running, 3);

    disk.fill();
    await serveAll(running, 3);
    const notReadyAfterMs = await readyBecomes(running, 503, 30_000);
    expect(notReadyAfterMs).toBeLessThan(30_000);
    // Log lines are written in batches (adapters/node/buffered-line-writer.ts): wait for them, not for a while.
    await running.waitForOutput('usage ledger cannot persist usage; not ready', 30_000);
    expect(running.output()).toMatch(/"level":"error","message":"usage ledger writes are failing/);
    expect(running.output()).toMatch(/"level":"error","message":"usage spill cannot take events"/);
    expect(running.output()).toMatch(/"level":"error","message":"usage ledger cannot persist usage; not ready"/);

    // Past the memory bound the oldest events are lost: counted and logged, and every request is still answered.
    await serveAll(running, maxQueuedEvents * 2);
    await waitUntil(() => /"message":"usage events lost/.test(running.output()), 'loss logged', 30_000);
    const during = await metrics(running);
    expect(metric(during, 'torii_usage_events_lost_total')).toBeGreaterThan(0);
    expect(metric(during, 'torii_usage_write_failures_total')).toBeGreaterThan(0);
    expect(metric(during, 'torii_usage_ledger_can_persist')).toBe(0);
    expect((await get(running, '/health/live')).status).toBe(200);

    disk.free();
    await readyBecomes(running, 200, 60_000);
    await running.waitForOutput('"message":"usage ledger writes recovered"', 30_000);
    // "Recovered" is logged at the first batch that is written; the rest of what the queue kept follows in later batches
    // (on a loaded machine, after the metrics were read): wait for the count, not for a while.
    let after = await metrics(running);
    const recoveredAt = performance.now();
    while (metric(after, 'torii_usage_events_written_total') < 3 && performance.now() - recoveredAt < 30_000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      after = await metrics(running);
    }
    expect(metric(after, 'torii_usage_ledger_can_persist')).toBe(1);
    expect(metric(after, 'torii_usage_events_written_total')).toBeGreaterThanOrEqual(3);
    await serveAll(running, 3);
  });

  it('Postgres down and the spill disk full: logs, counts, turns not ready, recovers', async () => {
    postgres = await startRestartablePostgres();
    disk = mountTinyDisk('1m');
    // No reserve: the spill runs into the kernel's own ENOSPC.
    const running = await start({
      TORII_DATA_DIR: disk.path,
      DATABASE_URL: postgres.url,
      TORII_DATA_DIR_MIN_FREE_BYTES: '0',
    });
    await serveAll(running, 3);
    disk.fill();
    await postgres.stop();

    await serveAll(running, maxQueuedEvents * 2);
    await readyBecomes(running, 503, 60_000);
    await waitUntil(() => /"message":"usage events lost/.test(running.output()), 'loss logged', 60_000);
    const during = await metrics(running);
    expect(metric(during, 'torii_usage_events_lost_total')).toBeGreaterThan(0);
    await running.waitForOutput('usage ledger writes are failing', 30_000);
    expect(running.output()).toMatch(/"level":"error","message":"usage ledger writes are failing/);

    await postgres.start();
    disk.free();
    await readyBecomes(running, 200, 90_000);
    await serveAll(running, 3);
  });
});
