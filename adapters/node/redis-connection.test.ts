import { type ChildProcess, spawn } from 'node:child_process';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { recordingLogger } from '../../tests/support/recording-logger.ts';
import { openRedisConnection, whenRedisReady } from './redis-connection.ts';
import { startFreezableProxy } from './redis-freezable-proxy.test-helper.ts';
import { createRedisKeyValueCache } from './redis-key-value-cache.ts';

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A redis-server of this test's own, so it can be stopped and started again. */
async function startRedisServer(port: number): Promise<ChildProcess> {
  const server = spawn('redis-server', [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
  ]);
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
    server.stdout?.on('data', (chunk) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    server.once('error', reject);
  });
  return server;
}

async function stopRedisServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null) return;
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGKILL');
  await exited;
}

/** How long the promise took to settle, and whether it rejected. */
async function timed(promise: Promise<unknown>): Promise<{ ms: number; rejected: boolean }> {
  const started = performance.now();
  const rejected = await promise.then(
    () => false,
    () => true,
  );
  return { ms: performance.now() - started, rejected };
}

describe('openRedisConnection', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const track = (redis: Redis) => {
    cleanups.push(() => redis.disconnect());
    return redis;
  };

  it('rejects at once while Redis is unreachable, and logs the outage once, not per attempt', async () => {
    const port = await freePort();
    const { logger, lines } = recordingLogger();
    const redis = track(openRedisConnection(`redis://127.0.0.1:${port}`, { logger }));
    const cache = createRedisKeyValueCache(redis, { prefix: 'unreachable:' });
    await new Promise((resolve) => setTimeout(resolve, 500)); // several reconnect attempts
    const outcome = await timed(cache.get('key'));
    expect(outcome.rejected).toBe(true);
    expect(outcome.ms).toBeLessThan(100);
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
  });

  it('rejects after the command timeout when Redis stops answering on an open connection', async () => {
    const url = process.env.TORII_TEST_REDIS_URL;
    if (!url) throw new Error('TORII_TEST_REDIS_URL is not set: this test needs a real Redis (see tests/services/).');
    const proxy = await startFreezableProxy(new URL(url));
    cleanups.push(() => proxy.close());
    const { logger } = recordingLogger();
    const redis = track(openRedisConnection(`redis://127.0.0.1:${proxy.port}`, { logger, commandTimeoutMs: 300 }));
    await whenRedisReady(redis, 5_000);
    const cache = createRedisKeyValueCache(redis, { prefix: `frozen:${Date.now()}:` });
    expect(await cache.get('key')).toBeUndefined();
    proxy.freezeOpenConnections();
    const outcome = await timed(cache.get('key'));
    expect(outcome.rejected).toBe(true);
    expect(outcome.ms).toBeGreaterThanOrEqual(250);
    expect(outcome.ms).toBeLessThan(1_500);
  });

  it('comes back by itself when Redis does, and says so', async () => {
    const port = await freePort();
    let server = await startRedisServer(port);
    cleanups.push(() => stopRedisServer(server));
    const { logger, lines } = recordingLogger();
    const redis = track(openRedisConnection(`redis://127.0.0.1:${port}`, { logger }));
    await whenRedisReady(redis, 5_000);
    const cache = createRedisKeyValueCache(redis, { prefix: 'restart:' });
    await cache.set('key', 'before', { ttlSeconds: 60 });

    await stopRedisServer(server);
    await expect(cache.get('key')).rejects.toThrow();

    server = await startRedisServer(port);
    await whenRedisReady(redis, 10_000);
    expect(await cache.get('key')).toBeUndefined(); // a fresh server without persistence
    await cache.set('key', 'after', { ttlSeconds: 60 });
    expect(await cache.get('key')).toBe('after');
    expect(lines.map((line) => line.message)).toEqual([
      'redis connection unavailable; retrying in the background',
      'redis connection restored',
    ]);
  }, 30_000);
});

describe('whenRedisReady', () => {
  it('rejects after its timeout when Redis never becomes ready', async () => {
    const port = await freePort();
    const redis = openRedisConnection(`redis://127.0.0.1:${port}`, { logger: recordingLogger().logger });
    try {
      await expect(whenRedisReady(redis, 200)).rejects.toThrow(/not ready within 200 ms/);
    } finally {
      redis.disconnect();
    }
  });
});
