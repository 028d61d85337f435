import { randomUUID } from 'node:crypto';
import { Redis as IoRedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeCircuitStoreConformance } from '../../tests/conformance/circuit-store-suite.ts';
import { testRedisUrl } from '../../tests/services/test-redis.ts';
import { startUpstashBridge, type UpstashBridge } from '../../tests/upstash-bridge/upstash-bridge.ts';
import { createUpstashCircuitStore } from './upstash-circuit-store.ts';
import { createUpstashRedisClient } from './upstash-redis-client.ts';

describeCircuitStoreConformance('Upstash REST (@upstash/redis through the bridge, real Redis behind)', async () => {
  const bridge = await startUpstashBridge({ redisUrl: testRedisUrl(), token: randomUUID() });
  return {
    createStores(count) {
      const key = `torii-test:circuits:${randomUUID()}`;
      // One client each: separate HTTP calls, which the bridge serves on separate Redis connections.
      return Array.from({ length: count }, () =>
        createUpstashCircuitStore({
          redis: createUpstashRedisClient({ url: bridge.url, token: bridge.token, timeoutMs: 10_000 }),
          key,
        }),
      );
    },
    close: () => bridge.close(),
  };
});

describe('createUpstashCircuitStore', () => {
  let bridge: UpstashBridge;
  let redis: IoRedis;

  beforeAll(async () => {
    bridge = await startUpstashBridge({ redisUrl: testRedisUrl(), token: randomUUID() });
    redis = new IoRedis(testRedisUrl(), { maxRetriesPerRequest: 1 });
  });

  afterAll(async () => {
    await redis?.quit();
    await bridge?.close();
  });

  it('lets its hash expire a minute after the end of the latest opening, and skips fields it cannot read', async () => {
    const key = `torii-test:circuits:${randomUUID()}`;
    const store = createUpstashCircuitStore({
      redis: createUpstashRedisClient({ url: bridge.url, token: bridge.token, timeoutMs: 10_000 }),
      key,
    });
    await store.record({ origin: 'p', deploymentId: 'g/0', state: 'open', openUntil: Date.now() + 30_000 });
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(80_000);
    expect(ttl).toBeLessThanOrEqual(90_000);
    await redis.hset(key, 'junk', 'not a circuit', 'no-end', '|origin');
    expect((await store.openCircuits()).map((circuit) => circuit.deploymentId)).toEqual(['g/0']);
    // The next write sweeps the unreadable fields.
    await store.record({ origin: 'p', deploymentId: 'g/1', state: 'closed' });
    expect(await redis.hkeys(key)).toEqual(['g/0']);
  });
});
