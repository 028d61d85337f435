import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requiredServiceUrl } from '../e2e/accounting-harness.ts';
import type { RunningGateway } from '../e2e/gateway-process.ts';
import { nodeClusterRuntime } from '../e2e/gateway-starters.ts';
import { chaosClient, chaosMasterKey } from './chaos-client.ts';
import { childProcessIds, processAlive, waitUntil } from './process-tree.ts';
import { hostileEnvironment, startHostileUpstream, type HostileUpstream } from './hostile-upstream.ts';
import { chat, failInOneWorker, sharedStateConfig } from './routing-shared-state-helpers.ts';

// The five failures users measured in the incumbent's routing, each a test that a naive router fails: two Node
// instances, each a cluster of two workers, sharing circuit changes through Redis.
describe('routing state shared across two Node instances (cluster of 2 each, Redis)', { timeout: 120_000 }, () => {
  let upstream: HostileUpstream;
  let instances: RunningGateway[] = [];
  const count = (model: string) => upstream.requests.get(model) ?? 0;

  beforeAll(async () => {
    upstream = await startHostileUpstream();
    const redisUrl = requiredServiceUrl('TORII_TEST_REDIS_URL');
    const start = () =>
      nodeClusterRuntime.start(sharedStateConfig(upstream), {
        ...hostileEnvironment,
        TORII_MASTER_KEY: chaosMasterKey,
        REDIS_URL: redisUrl,
        TORII_DATA_DIR: mkdtempSync(join(tmpdir(), 'torii-routing-shared-')),
      });
    instances = await Promise.all([start(), start()]);
  });

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await upstream?.close();
  });

  it('25 consecutive 500s do not leave a deployment in rotation: it is cooled for all after its first failures', async () => {
    for (let index = 0; index < 25; index++) {
      const response = await chat(instances[index % 2]!, 'keeps-failing');
      expect(response.status).toBe(200);
    }
    // Five failures open it in the process that saw them; the others hear it at once. Four processes could each
    // have counted up to four failures before any of them opened it: at most 5 + 3 x 4 = 17 ever, 25 when naive.
    const failedAfterOpening = count('error:500:keeps-failing');
    expect(failedAfterOpening).toBeLessThanOrEqual(17);
    for (let index = 0; index < 40; index++) await chat(instances[index % 2]!, 'keeps-failing');
    expect(count('error:500:keeps-failing')).toBe(failedAfterOpening);
  });

  it('a cooldown one instance opened is honoured by the other at once, not on a polling cycle', async () => {
    // Three failures in one process (one kept-alive connection: one worker of instance A) open the circuit there.
    await failInOneWorker(instances[0]!, 'shared-cooldown', 3);
    expect(count('error:500:shared')).toBe(3);
    // The opening was published before the retry that served the third response went out. Instance B's workers,
    // which never saw a failure, must skip the deployment at once; a naive router sends each of them 3 more.
    for (let index = 0; index < 20; index++) {
      const response = await chat(instances[1]!, 'shared-cooldown');
      expect(response.status).toBe(200);
    }
    // One racing request at most is tolerated: the change travels through Redis in about a millisecond.
    expect(count('error:500:shared')).toBeLessThanOrEqual(4);
  });

  it('a deployment that fails as a fallback is cooled down like any other', async () => {
    for (let index = 0; index < 20; index++) {
      const response = await chat(instances[index % 2]!, 'primary');
      expect(response.status).toBe(200);
      expect(response.headers.get('x-torii-model-group')).toBe('fallback');
    }
    // Two failures open it; four processes may each see one before the first opening reaches them.
    expect(count('error:502:fallback')).toBeLessThanOrEqual(5);
  });

  it('retries do not go back to a deployment that cooled during the same request (A, A, A, B was the bug)', async () => {
    const response = await chat(instances[0]!, 'cooled-mid-request');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-torii-attempts')).toBe('2');
    expect(response.headers.get('x-torii-deployment')).toBe('cooled-mid-request/1');
    expect(count('error:500:mid-request')).toBe(1);
  });

  it('a deployment is back as soon as its cooldown is over, with no background health check', async () => {
    // flaky:2 fails its first two requests: its circuit opens (500 ms) on each failure it meets, then a probe after
    // the cooldown finds it well and it is tier 0 again, for both instances.
    let servedByRecovered = 0;
    for (let index = 0; index < 2000 && servedByRecovered < 4; index++) {
      const response = await chat(instances[index % 2]!, 'recovers');
      expect(response.status).toBe(200);
      if (response.headers.get('x-torii-deployment') === 'recovers/0') servedByRecovered++;
      // A poll interval while it cools, not a wait for the cooldown: the loop ends with the first answers it serves.
      else await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(servedByRecovered).toBe(4);
    expect(count('flaky:2')).toBeLessThanOrEqual(2 + 4 + 4);
  });

  it('the admin view and the openai SDK agree: the failing deployments are cooling down everywhere', async () => {
    for (const instance of instances) {
      const client = chaosClient(instance);
      const answer = await client.chat.completions.create({
        model: 'keeps-failing',
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(answer.choices[0]?.message.content).toBeTypeOf('string');
      const admin = await fetch(`${instance.baseURL}/admin/deployments`, {
        headers: { authorization: `Bearer ${chaosMasterKey}` },
      });
      const { data } = (await admin.json()) as { data: { id: string; state: string }[] };
      expect(data.find((entry) => entry.id === 'keeps-failing/0')?.state).toBe('cooling_down');
      expect(data.find((entry) => entry.id === 'shared-cooldown/0')?.state).toBe('cooling_down');
    }
  });
});

/** Polls `url` until it answers 200 (the port refuses connections while no worker listens). */
async function waitUntilReady(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await fetch(url).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`${url} not ready within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// Without Redis, the cluster primary relays circuit changes between its workers.
describe('routing state shared across the workers of one Node cluster without Redis', { timeout: 120_000 }, () => {
  let upstream: HostileUpstream;
  let gateway: RunningGateway;

  beforeAll(async () => {
    upstream = await startHostileUpstream();
    gateway = await nodeClusterRuntime.start(sharedStateConfig(upstream), {
      ...hostileEnvironment,
      TORII_MASTER_KEY: chaosMasterKey,
      TORII_DATABASE: 'off',
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
  });

  it('a cooldown one worker opened is honoured by the other at once', async () => {
    await failInOneWorker(gateway, 'shared-cooldown', 3);
    for (let index = 0; index < 20; index++) expect((await chat(gateway, 'shared-cooldown')).status).toBe(200);
    // The other worker never saw a failure; a naive router sends it 3 more.
    expect(upstream.requests.get('error:500:shared')).toBeLessThanOrEqual(4);
  });

  it('workers started after the opening (both killed and replaced) hear it from the primary before they listen', async () => {
    const failuresBefore = upstream.requests.get('error:500:shared') ?? 0;
    expect(failuresBefore).toBeGreaterThanOrEqual(3);
    const killed = childProcessIds(gateway.pid!);
    expect(killed).toHaveLength(2);
    for (const pid of killed) process.kill(pid, 'SIGKILL');
    await waitUntil(() => killed.every((pid) => !processAlive(pid)), 'the killed workers gone', 30_000);
    // A replacement takes connections only once it listens, and it listens only after the primary's replay.
    await waitUntil(() => childProcessIds(gateway.pid!).length === 2, 'two replacement workers forked', 60_000);
    await waitUntilReady(`${gateway.baseURL}/health/ready`, 60_000);
    for (let index = 0; index < 20; index++) expect((await chat(gateway, 'shared-cooldown')).status).toBe(200);
    // Fresh workers that had not heard of the opening would each send it 3 more.
    expect(upstream.requests.get('error:500:shared')).toBe(failuresBefore);
  });
});
