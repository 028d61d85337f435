import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { describeKeyValueCacheConformance } from '../../tests/conformance/key-value-cache-suite.ts';
import { startUpstashBridge } from '../../tests/upstash-bridge/upstash-bridge.ts';
import { createUpstashKeyValueCache } from './upstash-key-value-cache.ts';

function testRedisUrl(): string {
  const url = process.env.TORII_TEST_REDIS_URL;
  if (!url) throw new Error('TORII_TEST_REDIS_URL is not set: this suite needs a real Redis (see tests/services/).');
  return url;
}

describeKeyValueCacheConformance('Upstash REST (@upstash/redis through the bridge, real Redis behind)', async () => {
  const bridge = await startUpstashBridge({ redisUrl: testRedisUrl(), token: randomUUID() });
  const runPrefix = `test:upstash:${randomUUID()}:`;
  let caches = 0;
  return {
    createCache: () =>
      createUpstashKeyValueCache({
        url: bridge.url,
        token: bridge.token,
        prefix: `${runPrefix}${caches++}:`,
        timeoutMs: 10_000,
      }),
    atomicSetIfAbsent: true,
    getMany: true,
    close: () => bridge.close(),
  };
});

describe('createUpstashKeyValueCache', () => {
  it('rejects once its timeout passes when the server never answers', async () => {
    const sockets: import('node:net').Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    try {
      const cache = createUpstashKeyValueCache({
        url: `http://127.0.0.1:${address.port}`,
        token: 'token',
        prefix: 'p:',
        timeoutMs: 300,
        retries: 0,
      });
      const started = performance.now();
      await expect(cache.get('key')).rejects.toThrow();
      const elapsed = performance.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(250);
      expect(elapsed).toBeLessThan(2_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('rejects when the token is wrong', async () => {
    const bridge = await startUpstashBridge({ redisUrl: testRedisUrl(), token: 'right' });
    try {
      const cache = createUpstashKeyValueCache({ url: bridge.url, token: 'wrong', prefix: 'p:' });
      await expect(cache.get('key')).rejects.toThrow(/Unauthorized/);
    } finally {
      await bridge.close();
    }
  });
});
