import { randomUUID } from 'node:crypto';
import { describeKeyValueCacheConformance } from '../../tests/conformance/key-value-cache-suite.ts';
import { openRedisConnection, whenRedisReady } from './redis-connection.ts';
import { createRedisKeyValueCache } from './redis-key-value-cache.ts';

describeKeyValueCacheConformance('Redis (ioredis, real server)', async () => {
  const url = process.env.TORII_TEST_REDIS_URL;
  if (!url) throw new Error('TORII_TEST_REDIS_URL is not set: this suite needs a real Redis (see tests/services/).');
  const redis = openRedisConnection(url, {
    logger: { info: () => {}, warn: console.warn, error: console.error },
    // The suite's 1 MiB values take longer than a request-path timeout on a busy test machine.
    commandTimeoutMs: 5_000,
  });
  await whenRedisReady(redis, 10_000);
  const runPrefix = `test:kv:${randomUUID()}:`;
  let caches = 0;
  return {
    createCache: () => createRedisKeyValueCache(redis, { prefix: `${runPrefix}${caches++}:` }),
    atomicSetIfAbsent: true,
    getMany: true,
    async close() {
      const keys = await redis.keys(`${runPrefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    },
  };
});
