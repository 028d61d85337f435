import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { e2eEnvironment, e2eGatewayConfig, e2eMasterKey, readFixture } from './e2e-fixtures.ts';
import { freePort, nodeReadyLine, spawnGateway, type RunningGateway } from './gateway-process.ts';

const openaiText = readFixture<{ choices: { message: { content: string } }[] }>('openai-compatible', 'text.json');

/** A fetch over a dedicated connection pool, so each client opens its own connection. */
function freshConnectionFetch(): typeof fetch {
  const dispatcher = new Agent({ connections: 1 });
  return ((input: string | URL | Request, init?: RequestInit) =>
    undiciFetch(input as string, { ...(init as object), dispatcher })) as unknown as typeof fetch;
}

function writeConfig(config: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'torii-e2e-lifecycle-')), 'torii.config.json');
  writeFileSync(path, JSON.stringify(config));
  return path;
}

async function startCluster(mock: MockUpstream): Promise<RunningGateway> {
  const port = await freePort();
  return await spawnGateway(process.execPath, ['dist/server.js'], {
    env: {
      ...e2eEnvironment,
      TORII_CONFIG: writeConfig(e2eGatewayConfig(mock.url)),
      PORT: String(port),
      HOST: '127.0.0.1',
      TORII_WORKERS: '2',
    },
    port,
    // Readiness-based: the cluster is ready when /health/ready answers 200; the limit is only for a start that hangs.
    readyTimeoutMs: 90_000,
    readyLine: nodeReadyLine,
  });
}

// Node-only behaviour of dist/server.js: cluster-wide metrics, draining on SIGTERM, start-up config errors. Each test
// starts its own cluster, so each has room for a slow start on a busy machine.
describe('Node server lifecycle', { timeout: 180_000 }, () => {
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
  });

  afterAll(async () => {
    await mock?.close();
  });

  it('serves /metrics aggregated across cluster workers', async () => {
    const gateway = await startCluster(mock);
    try {
      // A new client (and so a new connection) each time, so the cluster spreads requests over both workers.
      for (let index = 0; index < 12; index++) {
        const client = new OpenAI({
          baseURL: `${gateway.baseURL}/v1`,
          apiKey: e2eMasterKey,
          maxRetries: 0,
          fetch: freshConnectionFetch(),
        });
        await client.chat.completions.create({ model: 'gpt-text', messages: [{ role: 'user', content: 'x' }] });
      }
      const metrics = await (await fetch(`${gateway.baseURL}/metrics`)).text();
      const requests = /torii_requests_total\{[^}]*model_group="gpt-text"[^}]*status_code="200"[^}]*\} (\d+)/.exec(
        metrics,
      );
      expect(Number(requests?.[1])).toBe(12);
      expect(metrics).toMatch(/torii_tokens_total\{[^}]*type="input"[^}]*\} \d+/);
      // The process metrics of every worker and the primary, aggregated (prom-client's defaults).
      expect(metrics).toMatch(/^process_cpu_seconds_total \d/m);
      expect(metrics).toMatch(/^nodejs_heap_size_used_bytes \d+/m);
      expect(metrics).toMatch(/torii_overhead_seconds_bucket/);
      expect(metrics).toMatch(/torii_upstream_duration_seconds_count\{provider="openai"\} 12/);
      expect(metrics).toMatch(/torii_requests_in_flight 0/);
      // Worker health and the usage ledger are in the same exposition (kept by the primary).
      expect(metrics).toMatch(/^torii_worker_restarts_total 0$/m);
      expect(metrics).toMatch(/^torii_worker_heartbeat_misses_total\{phase="running"\} 0$/m);
      expect(metrics).toMatch(/^torii_usage_events_lost_total 0$/m);
      expect(metrics).toMatch(/^torii_usage_ledger_can_persist 1$/m);
      expect(metrics).not.toMatch(/did not answer/);
    } finally {
      await gateway.stop();
    }
  });

  it('on SIGTERM stops accepting, lets an in-flight stream finish, and exits 0', async () => {
    const gateway = await startCluster(mock);
    const client = new OpenAI({ baseURL: `${gateway.baseURL}/v1`, apiKey: e2eMasterKey, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'gpt-slow',
      stream: true,
      messages: [{ role: 'user', content: 'x' }],
    });
    let text = '';
    let stopping: Promise<number | null> | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      stopping ??= gateway.stop();
    }
    expect(text).toBe(openaiText.choices[0]?.message.content);
    expect(await stopping).toBe(0);
    await expect(fetch(`${gateway.baseURL}/health/live`)).rejects.toThrow();
  });

  it('refuses to start with an invalid config, naming the field and the missing variable', () => {
    const result = spawnSync(process.execPath, ['dist/server.js'], {
      env: {
        ...process.env,
        TORII_WORKERS: '2',
        TORII_CONFIG: writeConfig({
          modelGroups: {
            good: { deployments: [{ provider: 'openai', model: 'x', apiKey: '${TORII_TEST_UNSET_VARIABLE}' }] },
            bad: { deployments: [{ provider: 'no-such-provider', model: 'x', apiKey: 'k', baseURL: 'not a url' }] },
          },
        }),
      },
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      'modelGroups.good.deployments[0].apiKey: environment variable TORII_TEST_UNSET_VARIABLE is not set',
    );
    const second = spawnSync(process.execPath, ['dist/server.js'], {
      env: {
        ...process.env,
        TORII_WORKERS: '1',
        TORII_CONFIG: writeConfig({
          modelGroups: {
            bad: { deployments: [{ provider: 'no-such-provider', model: 'x', apiKey: 'k', baseURL: 'not a url' }] },
          },
        }),
      },
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(second.status).toBe(1);
    expect(second.stderr).toContain('modelGroups.bad.deployments[0].baseURL');
  });
});
