import { describe, expect, it } from 'vitest';
import { describeKeyValueCacheConformance } from '../../tests/conformance/key-value-cache-suite.ts';
import { createMemoryKeyValueCache } from './memory-key-value-cache.ts';

describeKeyValueCacheConformance('memory', async () => ({
  createCache: () => createMemoryKeyValueCache({ maxEntries: 10_000 }),
  atomicSetIfAbsent: true,
  getMany: true,
  close: async () => {},
}));

describe('createMemoryKeyValueCache', () => {
  it('evicts the least recently used entry past maxEntries', async () => {
    const cache = createMemoryKeyValueCache({ maxEntries: 2 });
    await cache.set('a', '1', { ttlSeconds: 60 });
    await cache.set('b', '2', { ttlSeconds: 60 });
    await cache.get('a');
    await cache.set('c', '3', { ttlSeconds: 60 });
    expect([await cache.get('a'), await cache.get('b'), await cache.get('c')]).toEqual(['1', undefined, '3']);
  });

  it('expires on the injected clock, in seconds', async () => {
    let time = 0;
    const cache = createMemoryKeyValueCache({ maxEntries: 10, now: () => time });
    await cache.set('a', 'value', { ttlSeconds: 30 });
    time = 29_999;
    expect(await cache.get('a')).toBe('value');
    time = 30_000;
    expect(await cache.get('a')).toBeUndefined();
  });
});
