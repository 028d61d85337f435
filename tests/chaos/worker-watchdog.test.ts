import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../e2e/gateway-process.ts';
import { nodeClusterRuntime } from '../e2e/gateway-starters.ts';
import { chaosMasterKey } from './chaos-client.ts';
import {
  hostileEnvironment,
  hostileGatewayConfig,
  startHostileUpstream,
  type HostileUpstream,
} from './hostile-upstream.ts';
import { childProcessIds, processAlive, waitUntil } from './process-tree.ts';

// Defect: a worker whose event loop stopped turning was never noticed (it kept its share of connections and its
// usage for good), and workers outlived the primary: SIGTERM with a stuck worker left it running, and a primary
// killed with SIGKILL left every worker behind. A worker is made to spin on purpose by a test-only preload
// (spin-worker-preload.ts), without any hook in the product.

const preload = fileURLToPath(new URL('./spin-worker-preload.ts', import.meta.url));
const heartbeatTimeoutMs = 2_000;

interface SpinningGateway {
  gateway: RunningGateway;
  primary: number;
  /** Every worker pid the test has seen, for the teardown. */
  seen: Set<number>;
  spin(pid: number): Promise<void>;
}

async function startSpinnableCluster(
  upstream: HostileUpstream,
  environment: Record<string, string> = {},
): Promise<SpinningGateway> {
  const spinDirectory = mkdtempSync(join(tmpdir(), 'torii-chaos-spin-'));
  const gateway = await nodeClusterRuntime.start(hostileGatewayConfig(upstream.url, ['text']), {
    ...hostileEnvironment,
    TORII_MASTER_KEY: chaosMasterKey,
    NODE_OPTIONS: `--import ${preload}`,
    TORII_CHAOS_SPIN_DIR: spinDirectory,
    TORII_WORKER_HEARTBEAT_TIMEOUT_MS: String(heartbeatTimeoutMs),
    ...environment,
  });
  const primary = gateway.pid as number;
  await waitUntil(() => childProcessIds(primary).length === 2, 'two workers', 30_000);
  const seen = new Set(childProcessIds(primary));
  return {
    gateway,
    primary,
    seen,
    async spin(pid) {
      for (const child of childProcessIds(primary)) seen.add(child);
      writeFileSync(join(spinDirectory, `spin-${pid}`), '');
      await waitUntil(() => existsSync(join(spinDirectory, `spinning-${pid}`)), `worker ${pid} spinning`, 30_000);
    },
  };
}

/** One chat completion on a connection of its own (a pooled one could be the spinning worker's). */
async function chatOnNewConnection(gateway: RunningGateway): Promise<number> {
  const dispatcher = new Agent({ connections: 1, pipelining: 0 });
  try {
    const response = await undiciFetch(`${gateway.baseURL}/v1/chat/completions`, {
      method: 'POST',
      dispatcher,
      signal: AbortSignal.timeout(10_000),
      headers: { authorization: `Bearer ${chaosMasterKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/text', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  } finally {
    await dispatcher.destroy();
  }
}

/** Sends `count` requests one after another; resolves with how many were answered 200. */
async function servedOf(gateway: RunningGateway, count: number): Promise<number> {
  let served = 0;
  for (let index = 0; index < count; index++) if ((await chatOnNewConnection(gateway)) === 200) served++;
  return served;
}

function metricValue(text: string, series: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
}

async function metricsText(gateway: RunningGateway): Promise<string> {
  const dispatcher = new Agent({ connections: 1 });
  try {
    const response = await undiciFetch(`${gateway.baseURL}/metrics`, {
      dispatcher,
      signal: AbortSignal.timeout(10_000),
    });
    return await response.text();
  } finally {
    await dispatcher.destroy();
  }
}

describe('the cluster watches its workers (Node, dist/server.js)', { timeout: 180_000 }, () => {
  let upstream: HostileUpstream;
  let running: SpinningGateway | undefined;

  beforeAll(async () => {
    upstream = await startHostileUpstream();
  });

  afterEach(async () => {
    await running?.gateway.stop();
    // Should the product fail, no spinning worker may outlive the test either.
    for (const pid of running?.seen ?? []) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }
    running = undefined;
  });

  afterAll(async () => {
    await upstream?.close();
  });

  it('kills a worker whose event loop stopped, replaces it, and keeps serving throughout', async () => {
    running = await startSpinnableCluster(upstream);
    const { gateway, primary } = running;
    const [first, second] = childProcessIds(primary) as [number, number];

    await running.spin(first);
    // The other worker answers meanwhile; at most the one connection handed to the spinning worker is lost.
    expect(await servedOf(gateway, 6)).toBeGreaterThanOrEqual(5);
    await waitUntil(() => !processAlive(first), `spinning worker ${first} killed`, 30_000);
    expect(gateway.output()).toMatch(
      new RegExp(`"message":"worker event loop stopped turning \\(no heartbeat\\); killing it","pid":${first}`),
    );
    await waitUntil(() => childProcessIds(primary).length === 2, 'a replacement worker', 30_000);
    const replacement = childProcessIds(primary).find((pid) => pid !== second) as number;
    expect(replacement).not.toBe(first);

    // Now spin the other original worker: only the replacement is left to answer, and it does.
    expect(gateway.output()).toMatch(/"level":"error","message":"worker exited unexpectedly; starting a new one"/);
    await running.spin(second);
    expect(await servedOf(gateway, 6)).toBeGreaterThanOrEqual(5);
    await waitUntil(() => !processAlive(second), `spinning worker ${second} killed`, 30_000);
    await waitUntil(() => childProcessIds(primary).length === 2, 'a second replacement', 30_000);
    expect(await servedOf(gateway, 4)).toBe(4);

    const metrics = await metricsText(gateway);
    expect(metricValue(metrics, 'torii_worker_restarts_total')).toBe(2);
    expect(metricValue(metrics, 'torii_worker_heartbeat_misses_total{phase="running"}')).toBe(2);
  });

  it('on SIGTERM with a spinning worker, the primary exits within its bound and leaves no worker', async () => {
    // The heartbeat bound is longer than the shutdown bound here, so the shutdown's own give-up is what acts.
    running = await startSpinnableCluster(upstream, {
      TORII_SHUTDOWN_GRACE_MS: '1000',
      TORII_WORKER_HEARTBEAT_TIMEOUT_MS: '120000',
    });
    const { gateway, primary } = running;
    const workers = childProcessIds(primary);
    await running.spin(workers[0] as number);
    process.kill(primary, 'SIGTERM');
    // Documented bound: TORII_SHUTDOWN_GRACE_MS + 7 s for the workers, then the primary's own usage flush (5 s).
    const exitedAfterMs = await waitUntil(() => !processAlive(primary), 'primary exit', 30_000);
    expect(exitedAfterMs).toBeLessThan(1_000 + 7_000 + 5_000 + 5_000);
    await waitUntil(() => workers.every((pid) => !processAlive(pid)), 'every worker gone', 2_000);
    expect(gateway.output()).toMatch(/workers did not exit within the shutdown bound; killing them/);
  });

  it('when the primary is killed with SIGKILL, a spinning worker ends by itself', async () => {
    running = await startSpinnableCluster(upstream);
    const { primary } = running;
    const workers = childProcessIds(primary);
    await running.spin(workers[0] as number);
    process.kill(primary, 'SIGKILL');
    await waitUntil(() => workers.every((pid) => !processAlive(pid)), 'every worker gone', 10_000);
  });
});
