/**
 * The one conformance suite of the `LimitStore` seam (src/limits/limit-store.ts). Every implementation calls
 * {@link describeLimitStoreConformance} from the test beside it: memory, Redis (ioredis, real server from
 * `TORII_TEST_REDIS_URL`), and the Durable Object (in workerd, through tests/conformance/key-counters-workerd.ts).
 *
 * The heart of it is atomicity: many leases racing on one counter (over several connections where the store has
 * them) never grant more than the limit in total, and grant exactly the limit when demand exceeds it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LimitStore } from '../../src/limits/limit-store.ts';

/** A store under test. */
export interface LimitStoreSubject {
  /**
   * `count` handles over one fresh namespace that no other call sees: separate connections (or clients) where the
   * store has them, so concurrency tests race for real. Called once per test.
   */
  createStores(count: number): LimitStore[];
  /** Releases connections. */
  close(): Promise<void>;
}

const minute = 60_000;
/** A window start well inside the current minute, fixed for the test. */
const currentWindow = (windowMs = minute): number => Math.floor(Date.now() / windowMs) * windowMs;

/** Describes the conformance tests for one store. */
export function describeLimitStoreConformance(name: string, open: () => Promise<LimitStoreSubject>): void {
  describe(`LimitStore conformance: ${name}`, () => {
    let subject: LimitStoreSubject;

    beforeAll(async () => {
      subject = await open();
    }, 60_000);

    afterAll(async () => {
      await subject?.close();
    }, 60_000);

    const oneStore = (): LimitStore => subject.createStores(1)[0] as LimitStore;

    it('grants what is asked within the limit and answers the running total', async () => {
      const store = oneStore();
      const window = { counter: 'rpm:a', windowStart: currentWindow(), windowMs: minute };
      expect(await store.lease({ ...window, amount: 4, limit: 10 })).toEqual({ granted: 4, used: 4 });
      expect(await store.lease({ ...window, amount: 5, limit: 10 })).toEqual({ granted: 5, used: 9 });
    });

    it('grants only what is left, then nothing, once the limit is reached', async () => {
      const store = oneStore();
      const window = { counter: 'tpm:a', windowStart: currentWindow(), windowMs: minute };
      expect(await store.lease({ ...window, amount: 8, limit: 10 })).toEqual({ granted: 8, used: 8 });
      expect(await store.lease({ ...window, amount: 8, limit: 10 })).toEqual({ granted: 2, used: 10 });
      expect(await store.lease({ ...window, amount: 1, limit: 10 })).toEqual({ granted: 0, used: 10 });
    });

    it('grants nothing when fewer than `minimum` units are left, leaving them for smaller asks', async () => {
      const store = oneStore();
      const window = { counter: 'tpm:b', windowStart: currentWindow(), windowMs: minute };
      await store.lease({ ...window, amount: 7, limit: 10 });
      expect(await store.lease({ ...window, amount: 5, limit: 10, minimum: 5 })).toEqual({ granted: 0, used: 7 });
      expect(await store.lease({ ...window, amount: 5, limit: 10, minimum: 3 })).toEqual({ granted: 3, used: 10 });
    });

    it('takes a changed limit as given: a lower limit grants nothing while used is above it', async () => {
      const store = oneStore();
      const window = { counter: 'rpm:limit-change', windowStart: currentWindow(), windowMs: minute };
      await store.lease({ ...window, amount: 6, limit: 10 });
      expect(await store.lease({ ...window, amount: 1, limit: 5 })).toEqual({ granted: 0, used: 6 });
      expect(await store.lease({ ...window, amount: 10, limit: 20 })).toEqual({ granted: 10, used: 16 });
    });

    it('takes units back on release, never below zero', async () => {
      const store = oneStore();
      const window = { counter: 'tpm:c', windowStart: currentWindow(), windowMs: minute };
      await store.lease({ ...window, amount: 10, limit: 10 });
      await store.release({ ...window, amount: 4 });
      expect(await store.lease({ ...window, amount: 10, limit: 10 })).toEqual({ granted: 4, used: 10 });
      await store.release({ ...window, amount: 50 });
      expect(await store.lease({ ...window, amount: 3, limit: 10 })).toEqual({ granted: 3, used: 3 });
    });

    it('adds without checking the limit, after which leases grant nothing', async () => {
      const store = oneStore();
      const window = { counter: 'tpm:d', windowStart: currentWindow(), windowMs: minute };
      await store.lease({ ...window, amount: 9, limit: 10 });
      await store.add({ ...window, amount: 5 });
      expect(await store.lease({ ...window, amount: 1, limit: 10 })).toEqual({ granted: 0, used: 14 });
      await store.add({ counter: 'tpm:fresh', windowStart: window.windowStart, windowMs: minute, amount: 3 });
      expect(
        await store.lease({
          counter: 'tpm:fresh',
          windowStart: window.windowStart,
          windowMs: minute,
          amount: 1,
          limit: 4,
        }),
      ).toEqual({ granted: 1, used: 4 });
    });

    it('keeps counters, windows and window lengths apart', async () => {
      const store = oneStore();
      const windowStart = currentWindow();
      await store.lease({ counter: 'rpm:e', windowStart, windowMs: minute, amount: 10, limit: 10 });
      expect(await store.lease({ counter: 'rpm:f', windowStart, windowMs: minute, amount: 1, limit: 10 })).toEqual({
        granted: 1,
        used: 1,
      });
      expect(
        await store.lease({
          counter: 'rpm:e',
          windowStart: windowStart + minute,
          windowMs: minute,
          amount: 1,
          limit: 10,
        }),
      ).toEqual({ granted: 1, used: 1 });
      expect(
        await store.lease({
          counter: 'rpm:e',
          windowStart: currentWindow(1_000),
          windowMs: 1_000,
          amount: 1,
          limit: 10,
        }),
      ).toEqual({ granted: 1, used: 1 });
    });

    it('does not bring a window back on release', async () => {
      const store = oneStore();
      const window = { counter: 'tpm:never-leased', windowStart: currentWindow(), windowMs: minute };
      await store.release({ ...window, amount: 5 });
      expect(await store.lease({ ...window, amount: 10, limit: 10 })).toEqual({ granted: 10, used: 10 });
    });

    it('forgets a window once it is over', async () => {
      const store = oneStore();
      const windowMs = 100;
      const windowStart = currentWindow(windowMs);
      const window = { counter: 'rpm:expiring', windowStart, windowMs };
      await store.lease({ ...window, amount: 5, limit: 10 });
      // Past two window lengths (the longest a store may keep it), and a call in a later window.
      await new Promise((resolve) => setTimeout(resolve, 2 * windowMs + 50));
      await store.lease({ ...window, windowStart: currentWindow(windowMs) + windowMs, amount: 1, limit: 10 });
      expect(await store.lease({ ...window, amount: 1, limit: 10 })).toEqual({ granted: 1, used: 1 });
    });

    it('never grants more than the limit to concurrent leases over several connections', async () => {
      const stores = subject.createStores(4);
      const window = { counter: 'rpm:race', windowStart: currentWindow(), windowMs: minute };
      const limit = 100;
      const leases = Array.from({ length: 240 }, (_unused, index) =>
        (stores[index % stores.length] as LimitStore).lease({ ...window, amount: 1 + (index % 4), limit }),
      );
      const answers = await Promise.all(leases);
      const granted = answers.reduce((sum, answer) => sum + answer.granted, 0);
      expect(granted).toBe(limit);
      expect(Math.max(...answers.map((answer) => answer.used))).toBe(limit);
      // Each answer's `used` includes its own grant, and no two answers saw the same total after a grant.
      const totals = answers.filter((answer) => answer.granted > 0).map((answer) => answer.used);
      expect(new Set(totals).size).toBe(totals.length);
    }, 60_000);

    it('grants all-or-nothing leases to concurrent callers without passing the limit', async () => {
      const stores = subject.createStores(4);
      const window = { counter: 'tpm:race', windowStart: currentWindow(), windowMs: minute };
      const limit = 1_000;
      const answers = await Promise.all(
        Array.from({ length: 120 }, (_unused, index) => {
          const amount = 7 + (index % 29);
          return (stores[index % stores.length] as LimitStore).lease({ ...window, amount, limit, minimum: amount });
        }),
      );
      const granted = answers.reduce((sum, answer) => sum + answer.granted, 0);
      expect(granted).toBeLessThanOrEqual(limit);
      expect(granted).toBeGreaterThan(limit - 36);
      answers.forEach((answer, index) => expect([0, 7 + (index % 29)]).toContain(answer.granted));
    });

    it('keeps the books straight under concurrent leases, releases and adds', async () => {
      const stores = subject.createStores(3);
      const window = { counter: 'tpm:mixed', windowStart: currentWindow(), windowMs: minute };
      const work: Array<Promise<unknown>> = [];
      for (let index = 0; index < 90; index += 1) {
        const store = stores[index % stores.length] as LimitStore;
        // Each release follows its own lease of more units, so no release ever meets a count below its amount.
        const leaseThenRelease = store
          .lease({ ...window, amount: 10, limit: 1_000_000 })
          .then(() => (index % 3 === 0 ? store.release({ ...window, amount: 4 }) : undefined));
        work.push(leaseThenRelease);
        if (index % 5 === 0) work.push(store.add({ ...window, amount: 2 }));
      }
      await Promise.all(work);
      expect(await (stores[0] as LimitStore).lease({ ...window, amount: 0, limit: 1_000_000 })).toEqual({
        granted: 0,
        used: 90 * 10 - 30 * 4 + 18 * 2,
      });
    });
  });
}
