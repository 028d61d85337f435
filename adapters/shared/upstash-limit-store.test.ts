import { randomUUID } from 'node:crypto';
import { Redis as IoRedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeLimitStoreConformance } from '../../tests/conformance/limit-store-suite.ts';
import { testRedisUrl } from '../../tests/services/test-redis.ts';
import { startUpstashBridge, type UpstashBridge } from '../../tests/upstash-bridge/upstash-bridge.ts';
import { createRedisLimitStore } from '../node/redis-limit-store.ts';
import { createUpstashLimitStore } from './upstash-limit-store.ts';
import { createUpstashRedisClient } from './upstash-redis-client.ts';

describeLimitStoreConformance('Upstash REST (@upstash/redis through the bridge, real Redis behind)', async () => {
  const bridge = await startUpstashBridge({ redisUrl: testRedisUrl(), token: randomUUID() });
  return {
    createStores(count) {
      const keyPrefix = `torii-test:upstash-limit:${randomUUID()}:`;
      // One client each: separate HTTP calls, which the bridge serves on separate Redis connections.
      return Array.from({ length: count }, () =>
        createUpstashLimitStore({ url: bridge.url, token: bridge.token, timeoutMs: 10_000, keyPrefix }),
      );
    },
    close: () => bridge.close(),
  };
});

describe('createUpstashLimitStore', () => {
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

  it('loads its scripts again after the server forgot them (EVALSHA falls back to EVAL)', async () => {
    const store = createUpstashLimitStore({
      redis: createUpstashRedisClient({ url: bridge.url, token: bridge.token }),
      keyPrefix: `torii-test:${randomUUID()}:`,
    });
    const window = { counter: 'rpm:flush', windowStart: 0, windowMs: 60_000 };
    await redis.script('FLUSH');
    expect(await store.lease({ ...window, amount: 1, limit: 3 })).toEqual({ granted: 1, used: 1 });
    await redis.script('FLUSH');
    expect(await store.lease({ ...window, amount: 5, limit: 3 })).toEqual({ granted: 2, used: 3 });
    await redis.script('FLUSH');
    await store.release({ ...window, amount: 3 });
    await redis.script('FLUSH');
    await store.add({ ...window, amount: 1 });
    expect(await store.lease({ ...window, amount: 5, limit: 3 })).toEqual({ granted: 2, used: 3 });
  });

  it('shares counters with the ioredis store: the same keys, scripts and expiry', async () => {
    const keyPrefix = `torii-test:${randomUUID()}:`;
    const overRest = createUpstashLimitStore({ url: bridge.url, token: bridge.token, keyPrefix });
    const overTcp = createRedisLimitStore({ redis, keyPrefix });
    const window = { counter: 'rpm:key_1', windowStart: 120_000, windowMs: 60_000 };
    expect(await overRest.lease({ ...window, amount: 4, limit: 10 })).toEqual({ granted: 4, used: 4 });
    expect(await overTcp.lease({ ...window, amount: 4, limit: 10 })).toEqual({ granted: 4, used: 8 });
    expect(await overRest.lease({ ...window, amount: 4, limit: 10 })).toEqual({ granted: 2, used: 10 });
    const key = `${keyPrefix}rpm:key_1:120000:60000`;
    expect(await redis.get(key)).toBe('10');
    expect(await redis.pttl(key)).toBeGreaterThan(119_000);
  });

  it('rejects when the token is wrong, so the limiter can fall back', async () => {
    const store = createUpstashLimitStore({ url: bridge.url, token: 'wrong', keyPrefix: 'p:', retries: 0 });
    await expect(
      store.lease({ counter: 'rpm:down', windowStart: 0, windowMs: 60_000, amount: 1, limit: 1 }),
    ).rejects.toThrow(/Unauthorized/);
  });
});
