import { describe, expect, it } from 'vitest';
import type { KeyValueCache } from '../cache/key-value-cache.ts';
import { createMemoryKeyValueCache } from '../cache/memory-key-value-cache.ts';
import { createCacheSpendCounters } from './budget-spend-counters.ts';

const counter = { keyId: 'key_1', periodLabel: '2025-06-01', ttlSeconds: 3600 };

function setup(maxEntries = 1000) {
  const cache = createMemoryKeyValueCache({ maxEntries });
  const process = (processId: string, maxSlots?: number) =>
    createCacheSpendCounters({ cache, processId, ...(maxSlots === undefined ? {} : { maxSlots }) });
  return { cache, process };
}

describe('createCacheSpendCounters', () => {
  it('sums what every process added, each in its own slot', async () => {
    const { cache, process } = setup();
    const first = process('process-a');
    const second = process('process-b');
    await first.add(counter, 1.5);
    await second.add(counter, 2);
    await first.add(counter, 0.25);
    expect(await first.read(counter)).toBeCloseTo(3.75, 12);
    expect(await second.read(counter)).toBeCloseTo(3.75, 12);
    expect(JSON.parse((await cache.get('torii:spend:key_1:2025-06-01:0')) ?? '')).toEqual({
      owner: 'process-a',
      usd: 1.75,
    });
    expect(JSON.parse((await cache.get('torii:spend:key_1:2025-06-01:1')) ?? '')).toEqual({
      owner: 'process-b',
      usd: 2,
    });
  });

  it('loses no update when processes add concurrently', async () => {
    const { process } = setup();
    const processes = Array.from({ length: 12 }, (_, index) => process(`process-${index}`));
    await Promise.all(
      processes.map(async (counters) => {
        for (let step = 0; step < 20; step++) await counters.add(counter, 0.5);
      }),
    );
    expect(await processes[0]?.read(counter)).toBe(12 * 20 * 0.5);
  });

  it('rewrites a slot the cache lost with the owner’s whole spend on its next add', async () => {
    const { cache, process } = setup();
    const counters = process('process-a');
    await counters.add(counter, 4);
    await cache.delete('torii:spend:key_1:2025-06-01:0');
    expect(await counters.read(counter)).toBe(0);
    await counters.add(counter, 1);
    expect(await counters.read(counter)).toBe(5);
  });

  it('keeps counting from its slot after forgetting it', async () => {
    const { process } = setup();
    const counters = process('process-a');
    await counters.add(counter, 4);
    counters.forget(counter);
    await counters.add(counter, 1);
    expect(await counters.read(counter)).toBe(5);
  });

  it('raises a total to the ledger’s and never lowers it', async () => {
    const { process } = setup();
    const first = process('process-a');
    const second = process('process-b');
    await first.add(counter, 2);
    expect(await second.raiseTo(counter, 7)).toBe(7);
    expect(await first.read(counter)).toBe(7);
    await first.add(counter, 1);
    expect(await second.raiseTo(counter, 7)).toBe(8);
    expect(await first.read(counter)).toBe(8);
  });

  it('counts into the base entry when every slot is taken', async () => {
    const { process } = setup();
    await process('process-a', 2).add(counter, 1);
    await process('process-b', 2).add(counter, 1);
    const third = process('process-c', 2);
    await third.add(counter, 3);
    await third.add(counter, 3);
    expect(await third.read(counter)).toBe(8);
  });

  it('reads 0 for a counter nobody wrote, and ignores garbage', async () => {
    const { cache, process } = setup();
    const counters = process('process-a');
    expect(await counters.read(counter)).toBe(0);
    await cache.set('torii:spend:key_1:2025-06-01:base', 'not json', { ttlSeconds: 60 });
    await cache.set('torii:spend:key_1:2025-06-01:0', '{"owner":"x","usd":-5}', { ttlSeconds: 60 });
    expect(await counters.read(counter)).toBe(0);
  });

  it('reads many counters in a few getMany calls, each total equal to a per-counter read', async () => {
    const { cache, process } = setup();
    const counterOf = (keyId: string) => ({ keyId, periodLabel: '2025-06-01', ttlSeconds: 3600 });
    // Counters written by 0 to 20 processes (past the first read's guess and the eight-slot read-ahead).
    const writers = [0, 1, 2, 3, 8, 9, 12, 20];
    const counters = writers.map((count) => counterOf(`key_${count}`));
    for (const [index, count] of writers.entries()) {
      for (let writer = 0; writer < count; writer++)
        await process(`process-${writer}`).add(counters[index]!, writer + 0.5);
    }
    await process('reconciler').raiseTo(counters[2]!, 100);
    let getManyCalls = 0;
    let getCalls = 0;
    const counting: KeyValueCache = {
      ...cache,
      get: (key) => ((getCalls += 1), cache.get(key)),
      getMany: (keys) => ((getManyCalls += 1), cache.getMany!(keys)),
    };
    const reader = createCacheSpendCounters({ cache: counting, processId: 'reader' });
    const expected = await Promise.all(counters.map((counter) => process('fresh').read(counter)));
    expect(expected).toEqual(writers.map((count, index) => (index === 2 ? 100 : count * (count / 2))));
    expect(await reader.readMany!(counters)).toEqual(expected);
    // Base and slots 0..1 of each, then eight more slots of those with both, eight more of the 12- and 20-slot ones,
    // and eight more of the 20-slot one.
    expect({ getManyCalls, getCalls }).toEqual({ getManyCalls: 4, getCalls: 0 });
    // The second read knows each counter's slots: one call, and the same totals.
    getManyCalls = 0;
    expect(await reader.readMany!(counters)).toEqual(expected);
    expect(getManyCalls).toBe(1);
    expect(await Promise.all(counters.map((counter) => reader.read(counter)))).toEqual(expected);
    // A counter that gained a slot since, and one that lost its slots, read right too.
    await process('process-new').add(counters[6]!, 1);
    await cache.delete('torii:spend:key_20:2025-06-01:0');
    expect(await reader.readMany!(counters)).toEqual(
      expected.map((total, index) => (index === 6 ? total + 1 : index === 7 ? 0 : total)),
    );
  });

  it('reads many counters through one get per key when the cache has no getMany', async () => {
    const { cache, process } = setup();
    const first = { ...counter, keyId: 'key_a' };
    const second = { ...counter, keyId: 'key_b' };
    await process('process-a').add(first, 1);
    await process('process-b').add(first, 2);
    await process('process-a').add(second, 4);
    const { getMany: _unused, ...withoutGetMany } = cache;
    const reader = createCacheSpendCounters({ cache: withoutGetMany, processId: 'reader' });
    expect(await reader.readMany!([first, second, { ...counter, keyId: 'key_none' }])).toEqual([3, 4, 0]);
  });

  it('reads 2,000 counters in a dozen getMany calls of at most 500 keys', async () => {
    const { cache, process } = setup(10_000);
    const counters = Array.from({ length: 2000 }, (_, index) => ({ ...counter, keyId: `key_${index}` }));
    const writer = process('process-a');
    for (const [index, each] of counters.entries()) await writer.add(each, index);
    const sizes: number[] = [];
    const counting: KeyValueCache = { ...cache, getMany: (keys) => (sizes.push(keys.length), cache.getMany!(keys)) };
    const reader = createCacheSpendCounters({ cache: counting, processId: 'reader' });
    expect(await reader.readMany!(counters)).toEqual(counters.map((_each, index) => index));
    // 2,000 x (base + slot 0 + slot 1) = 6,000 keys, at the first read as at the next.
    expect(sizes).toEqual(Array.from({ length: 12 }, () => 500));
    sizes.length = 0;
    expect(await reader.readMany!(counters)).toEqual(counters.map((_each, index) => index));
    expect(sizes).toEqual(Array.from({ length: 12 }, () => 500));
  });
});
