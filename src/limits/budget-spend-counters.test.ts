import { describe, expect, it } from 'vitest';
import { createMemoryKeyValueCache } from '../cache/memory-key-value-cache.ts';
import { createCacheSpendCounters } from './budget-spend-counters.ts';

const counter = { keyId: 'key_1', periodLabel: '2025-06-01', ttlSeconds: 3600 };

function setup() {
  const cache = createMemoryKeyValueCache({ maxEntries: 1000 });
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
});
