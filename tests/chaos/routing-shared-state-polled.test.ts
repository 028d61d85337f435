import { randomUUID } from 'node:crypto';
import { Redis as IoRedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstashCircuitsKey } from '../../adapters/shared/upstash-circuit-store.ts';
import { requiredServiceUrl } from '../e2e/accounting-harness.ts';
import type { RunningGateway } from '../e2e/gateway-process.ts';
import { denoRuntime, startWorkerdPeers } from '../e2e/gateway-starters.ts';
import { startUpstashBridge, type UpstashBridge } from '../upstash-bridge/upstash-bridge.ts';
import { chaosMasterKey } from './chaos-client.ts';
import { hostileEnvironment, startHostileUpstream, type HostileUpstream } from './hostile-upstream.ts';
import { chat, sharedStateConfig } from './routing-shared-state-helpers.ts';

/** The bound this suite states: a change reaches the other instance within one refresh (1 s) plus a store call. */
const refreshMs = 1_000;

interface DeploymentView {
  id: string;
  state: string;
  failures: number;
}

async function deploymentView(gateway: RunningGateway, id: string): Promise<DeploymentView | undefined> {
  const response = await fetch(`${gateway.baseURL}/admin/deployments`, {
    headers: { authorization: `Bearer ${chaosMasterKey}` },
    signal: AbortSignal.timeout(30_000),
  });
  const { data } = (await response.json()) as { data: DeploymentView[] };
  return data.find((deployment) => deployment.id === id);
}

/**
 * Asks `gateway` for the deployment until it is `state` (each ask is also a request, which is what makes a Worker
 * isolate refresh); answers how long that took. Gives up after a minute, far past the stated bound.
 */
async function untilState(gateway: RunningGateway, id: string, state: string): Promise<number> {
  const startedAt = performance.now();
  for (;;) {
    if ((await deploymentView(gateway, id))?.state === state) return performance.now() - startedAt;
    if (performance.now() - startedAt > 60_000) throw new Error(`${id} never became ${state} at ${gateway.baseURL}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Runtimes whose processes cannot push to each other (Workers isolates hold no connection between requests; Deno
 * reaches Redis only through Upstash's HTTP API) share circuits through a store each reads at most every second: the
 * Durable Object `ToriiCircuits` on Workers, an Upstash hash on Deno. Two instances each, a failing deployment at the
 * top tier of a `priority` group: once one instance opened its circuit, the other must stop sending it requests
 * within the bound, though it never saw a failure itself.
 */
const polledRuntimes: {
  name: string;
  start(upstream: HostileUpstream): Promise<{ instances: RunningGateway[]; close(): Promise<void> }>;
}[] = [
  {
    name: 'Cloudflare Workers: two workerd instances sharing the ToriiCircuits Durable Object',
    async start(upstream) {
      const instances = await startWorkerdPeers(sharedStateConfig(upstream), {
        ...hostileEnvironment,
        TORII_MASTER_KEY: chaosMasterKey,
      });
      return { instances, close: async () => void (await Promise.all(instances.map((instance) => instance.stop()))) };
    },
  },
  {
    name: 'Deno: two instances sharing an Upstash hash (REST bridge, real Redis)',
    async start(upstream) {
      const redisUrl = requiredServiceUrl('TORII_TEST_REDIS_URL');
      const redis = new IoRedis(redisUrl, { maxRetriesPerRequest: 1 });
      // A hash left by an earlier run of this suite would hold its openings for a minute or two.
      await redis.del(upstashCircuitsKey);
      await redis.quit();
      const bridge: UpstashBridge = await startUpstashBridge({ redisUrl, token: randomUUID() });
      const start = () =>
        denoRuntime.start(sharedStateConfig(upstream), {
          ...hostileEnvironment,
          TORII_MASTER_KEY: chaosMasterKey,
          TORII_DATABASE: 'off',
          UPSTASH_REDIS_REST_URL: bridge.url,
          UPSTASH_REDIS_REST_TOKEN: bridge.token,
        });
      const instances = await Promise.all([start(), start()]);
      return {
        instances,
        async close() {
          await Promise.all(instances.map((instance) => instance.stop()));
          await bridge.close();
        },
      };
    },
  },
];

describe.each(polledRuntimes)('routing state shared through a store: $name', (runtime) => {
  let upstream: HostileUpstream;
  let started: Awaited<ReturnType<(typeof runtime)['start']>> | undefined;
  const count = (model: string) => upstream.requests.get(model) ?? 0;

  beforeAll(async () => {
    upstream = await startHostileUpstream();
    started = await runtime.start(upstream);
  }, 240_000);

  afterAll(async () => {
    await started?.close();
    await upstream?.close();
  }, 60_000);

  it(
    'a cooldown one instance opened is honoured by the other within the refresh bound',
    { timeout: 180_000 },
    async () => {
      const [first, second] = started!.instances as [RunningGateway, RunningGateway];
      // Three failures open the circuit in the first instance (one process on both runtimes).
      for (let index = 0; index < 3; index++) expect((await chat(first, 'shared-cooldown')).status).toBe(200);
      expect(count('error:500:shared')).toBe(3);
      expect(await deploymentView(first, 'shared-cooldown/0')).toMatchObject({ state: 'cooling_down' });
      const tookMs = await untilState(second, 'shared-cooldown/0', 'cooling_down');
      // Within one refresh and the store call (generous slack for a busy machine), not a 10 s cycle.
      expect(tookMs).toBeLessThan(refreshMs + 4_000);
      // Learnt, not seen: the second instance counted no failure of its own.
      expect(await deploymentView(second, 'shared-cooldown/0')).toMatchObject({ failures: 0 });
      for (let index = 0; index < 20; index++) {
        const response = await chat(second, 'shared-cooldown');
        expect(response.status).toBe(200);
        expect(response.headers.get('x-torii-deployment')).toBe('shared-cooldown/1');
      }
      expect(count('error:500:shared')).toBe(3);
    },
  );

  it('a deployment that fails as a fallback is cooled for both instances', { timeout: 180_000 }, async () => {
    const [first, second] = started!.instances as [RunningGateway, RunningGateway];
    for (let index = 0; index < 2; index++) {
      const response = await chat(first, 'primary');
      expect(response.status).toBe(200);
      expect(response.headers.get('x-torii-model-group')).toBe('fallback');
    }
    expect(count('error:502:fallback')).toBe(2);
    await untilState(second, 'fallback/0', 'cooling_down');
    for (let index = 0; index < 10; index++) expect((await chat(second, 'primary')).status).toBe(200);
    expect(count('error:502:fallback')).toBe(2);
  });
});
