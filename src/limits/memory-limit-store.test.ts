import { describe, expect, it } from 'vitest';
import { describeLimitStoreConformance } from '../../tests/conformance/limit-store-suite.ts';
import { createMemoryLimitStore } from './memory-limit-store.ts';

describeLimitStoreConformance('memory', async () => ({
  createStores(count) {
    const store = createMemoryLimitStore();
    return Array.from({ length: count }, () => store);
  },
  close: async () => {},
}));

describe('createMemoryLimitStore', () => {
  it('sweeps past windows when a later window is named, whatever the wall clock says', async () => {
    const store = createMemoryLimitStore();
    await store.lease({ counter: 'rpm:a', windowStart: 0, windowMs: 1_000, amount: 3, limit: 10 });
    await store.lease({ counter: 'rpm:b', windowStart: 0, windowMs: 60_000, amount: 3, limit: 10 });
    // Still inside the first one-second window's run: nothing forgotten.
    expect(await store.lease({ counter: 'rpm:a', windowStart: 0, windowMs: 1_000, amount: 0, limit: 10 })).toEqual({
      granted: 0,
      used: 3,
    });
    await store.add({ counter: 'rpm:c', windowStart: 1_000, windowMs: 1_000, amount: 1 });
    expect(await store.lease({ counter: 'rpm:a', windowStart: 0, windowMs: 1_000, amount: 0, limit: 10 })).toEqual({
      granted: 0,
      used: 0,
    });
    // A window of another length is not swept by it.
    expect(await store.lease({ counter: 'rpm:b', windowStart: 0, windowMs: 60_000, amount: 0, limit: 10 })).toEqual({
      granted: 0,
      used: 3,
    });
  });
});
