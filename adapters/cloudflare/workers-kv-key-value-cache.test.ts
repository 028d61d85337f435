import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { getPlatformProxy } from 'wrangler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeKeyValueCacheConformance } from '../../tests/conformance/key-value-cache-suite.ts';
import { createWorkersKvKeyValueCache, type WorkersKvNamespace } from './workers-kv-key-value-cache.ts';

/** The binding as the simulated platform gives it, with `list` for inspecting what was stored. */
interface TestKvNamespace extends WorkersKvNamespace {
  list(options: { prefix: string }): Promise<{ keys: { name: string; expiration?: number }[] }>;
}

const configPath = fileURLToPath(new URL('../../tests/conformance/workers-kv.wrangler.jsonc', import.meta.url));

/** workerd's simulated KV, in memory (nothing persisted), through wrangler. */
async function startSimulatedKv() {
  const proxy = await getPlatformProxy<{ TORII_CACHE: TestKvNamespace }>({
    configPath,
    persist: false,
    remoteBindings: false,
    envFiles: [],
  });
  return { namespace: proxy.env.TORII_CACHE, dispose: () => proxy.dispose() };
}

describeKeyValueCacheConformance('Workers KV (workerd simulated KV via getPlatformProxy)', async () => {
  const { namespace, dispose } = await startSimulatedKv();
  let caches = 0;
  return {
    createCache: () => createWorkersKvKeyValueCache(namespace, { prefix: `test:${caches++}:` }),
    atomicSetIfAbsent: false,
    getMany: false,
    close: dispose,
  };
});

describe('createWorkersKvKeyValueCache (simulated KV)', () => {
  let kv: Awaited<ReturnType<typeof startSimulatedKv>>;

  beforeAll(async () => {
    kv = await startSimulatedKv();
  }, 120_000);

  afterAll(async () => {
    await kv?.dispose();
  });

  it('asks KV for at least its 60-second minimum TTL, and the TTL given when longer', async () => {
    const prefix = `ttl:${randomUUID()}:`;
    const cache = createWorkersKvKeyValueCache(kv.namespace, { prefix });
    const before = Date.now() / 1000;
    await cache.set('short', 'value', { ttlSeconds: 1 });
    await cache.set('long', 'value', { ttlSeconds: 3_600 });
    const { keys } = await kv.namespace.list({ prefix });
    const expiration = Object.fromEntries(keys.map((key) => [key.name.slice(prefix.length), key.expiration ?? 0]));
    expect(expiration.short! - before).toBeGreaterThanOrEqual(59);
    expect(expiration.short! - before).toBeLessThanOrEqual(62);
    expect(expiration.long! - before).toBeGreaterThanOrEqual(3_599);
    expect(expiration.long! - before).toBeLessThanOrEqual(3_602);
  });

  it('honours a TTL shorter than KV can, from the expiry stored with the value', async () => {
    let time = 1_000_000;
    const cache = createWorkersKvKeyValueCache(kv.namespace, { prefix: `exact:${randomUUID()}:`, now: () => time });
    await cache.set('key', 'value', { ttlSeconds: 5 });
    time += 4_999;
    expect(await cache.get('key')).toBe('value');
    expect(await cache.setIfAbsent('key', 'other', { ttlSeconds: 5 })).toBe(false);
    time += 1;
    expect(await cache.get('key')).toBeUndefined();
    expect(await cache.setIfAbsent('key', 'other', { ttlSeconds: 5 })).toBe(true);
    expect(await cache.get('key')).toBe('other');
  });

  it('reads a value written without expiry metadata (by another tool) as present', async () => {
    const prefix = `foreign:${randomUUID()}:`;
    await kv.namespace.put(`${prefix}key`, 'written elsewhere');
    const cache = createWorkersKvKeyValueCache(kv.namespace, { prefix });
    expect(await cache.get('key')).toBe('written elsewhere');
  });
});
