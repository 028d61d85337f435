import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeLimitStoreConformance } from '../../tests/conformance/limit-store-suite.ts';
import { startKeyCountersWorkerd, type KeyCountersWorkerd } from '../../tests/conformance/key-counters-workerd.ts';
import { keyCountersObjectName } from './durable-object-limit-store.ts';

// The store runs inside workerd (tests/conformance/key-counters-test-worker.ts); each client here is its own
// connection pool, standing for one isolate.
describeLimitStoreConformance('Durable Object (ToriiKeyCounters in workerd)', async () => {
  const workerd = await startKeyCountersWorkerd();
  return {
    createStores(count) {
      const prefix = `conformance:${randomUUID()}:`;
      return Array.from({ length: count }, () => workerd.limitStore(prefix));
    },
    close: () => workerd.close(),
  };
});

describe('keyCountersObjectName', () => {
  it("puts a key's counters in one object named after the key", () => {
    expect(keyCountersObjectName('rpm:key_1')).toBe('key:key_1');
    expect(keyCountersObjectName('tpm:key_1')).toBe('key:key_1');
    expect(keyCountersObjectName('rpm:key:with:colons')).toBe('key:key:with:colons');
  });

  it('names an object after the whole counter when it has no key part', () => {
    expect(keyCountersObjectName('plain')).toBe('key:plain');
    expect(keyCountersObjectName('rpm:')).toBe('key:rpm:');
  });
});

describe('createDurableObjectLimitStore (workerd)', () => {
  let workerd: KeyCountersWorkerd;

  beforeAll(async () => {
    workerd = await startKeyCountersWorkerd();
  }, 60_000);

  afterAll(async () => {
    await workerd?.close();
  });

  it("keeps a key's windows in its object's memory: an evicted object starts them again from zero", async () => {
    const prefix = `evict:${randomUUID()}:`;
    const store = workerd.limitStore(prefix);
    const windowStart = Math.floor(Date.now() / 60_000) * 60_000;
    const rpm = { counter: 'rpm:key_1', windowStart, windowMs: 60_000 };
    const tpm = { counter: 'tpm:key_1', windowStart, windowMs: 60_000 };
    const other = { counter: 'rpm:key_2', windowStart, windowMs: 60_000 };
    await store.lease({ ...rpm, amount: 3, limit: 10 });
    await store.lease({ ...tpm, amount: 300, limit: 1_000 });
    await store.lease({ ...other, amount: 4, limit: 10 });

    await workerd.evict(`${prefix}key:key_1`);

    // Both counters of key_1 lived in the evicted object; key_2's object kept its window.
    expect(await store.lease({ ...rpm, amount: 1, limit: 10 })).toEqual({ granted: 1, used: 1 });
    expect(await store.lease({ ...tpm, amount: 1, limit: 1_000 })).toEqual({ granted: 1, used: 1 });
    expect(await store.lease({ ...other, amount: 1, limit: 10 })).toEqual({ granted: 1, used: 5 });
  });

  it('rounds amounts to whole units as the Redis store does', async () => {
    const store = workerd.limitStore(`units:${randomUUID()}:`);
    const window = { counter: 'tpm:key_1', windowStart: 0, windowMs: 60_000 };
    expect(await store.lease({ ...window, amount: 2.9, limit: 10.5, minimum: 0.5 })).toEqual({ granted: 2, used: 2 });
    await store.add({ ...window, amount: 0.2 });
    await store.release({ ...window, amount: 0.7 });
    expect(await store.lease({ ...window, amount: 0, limit: 10 })).toEqual({ granted: 0, used: 3 });
  });
});
