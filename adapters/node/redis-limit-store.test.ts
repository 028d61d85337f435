import { testRedisUrl } from '../../tests/services/test-redis.ts';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeLimitStoreConformance } from '../../tests/conformance/limit-store-suite.ts';
import { createRedisLimitStore } from './redis-limit-store.ts';

describeLimitStoreConformance('redis', async () => {
  const url = testRedisUrl();
  const clients: Redis[] = [];
  return {
    createStores(count) {
      const keyPrefix = `torii-test:${randomUUID()}:`;
      return Array.from({ length: count }, () => {
        const redis = new Redis(url, { maxRetriesPerRequest: 1 });
        clients.push(redis);
        return createRedisLimitStore({ redis, keyPrefix });
      });
    },
    async close() {
      await Promise.all(clients.map((client) => client.quit()));
    },
  };
});

describe('createRedisLimitStore', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
  });

  afterAll(async () => {
    await redis?.quit();
  });

  it('writes one key per counter and window, expiring two window lengths after it was made', async () => {
    const keyPrefix = `torii-test:${randomUUID()}:`;
    const store = createRedisLimitStore({ redis, keyPrefix });
    await store.lease({ counter: 'rpm:key_1', windowStart: 120_000, windowMs: 60_000, amount: 2, limit: 5 });
    const key = `${keyPrefix}rpm:key_1:120000:60000`;
    expect(await redis.get(key)).toBe('2');
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(119_000);
    expect(ttl).toBeLessThanOrEqual(120_000);
    // Later calls keep the expiry they found: release keeps it, add does not reset it.
    await redis.pexpire(key, 50_000);
    await store.release({ counter: 'rpm:key_1', windowStart: 120_000, windowMs: 60_000, amount: 1 });
    await store.add({ counter: 'rpm:key_1', windowStart: 120_000, windowMs: 60_000, amount: 4 });
    expect(await redis.get(key)).toBe('5');
    expect(await redis.pttl(key)).toBeLessThanOrEqual(50_000);
    const addedKey = `${keyPrefix}tpm:key_1:120000:60000`;
    await store.add({ counter: 'tpm:key_1', windowStart: 120_000, windowMs: 60_000, amount: 4 });
    expect(await redis.pttl(addedKey)).toBeGreaterThan(119_000);
  });

  it('loads its scripts again after the server forgot them (EVALSHA falls back to EVAL)', async () => {
    const store = createRedisLimitStore({ redis, keyPrefix: `torii-test:${randomUUID()}:` });
    const window = { counter: 'rpm:flush', windowStart: 0, windowMs: 60_000 };
    await store.lease({ ...window, amount: 1, limit: 3 });
    await redis.script('FLUSH');
    expect(await store.lease({ ...window, amount: 5, limit: 3 })).toEqual({ granted: 2, used: 3 });
    await redis.script('FLUSH');
    await store.release({ ...window, amount: 3 });
    await redis.script('FLUSH');
    await store.add({ ...window, amount: 1 });
    expect(await store.lease({ ...window, amount: 5, limit: 3 })).toEqual({ granted: 2, used: 3 });
  });

  it('rejects when Redis cannot be reached, so the limiter can fall back', async () => {
    const unreachable = new Redis('redis://127.0.0.1:1', {
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      lazyConnect: true,
    });
    unreachable.on('error', () => {});
    const store = createRedisLimitStore({ redis: unreachable });
    await expect(
      store.lease({ counter: 'rpm:down', windowStart: 0, windowMs: 60_000, amount: 1, limit: 1 }),
    ).rejects.toThrow();
    unreachable.disconnect();
  });
});
