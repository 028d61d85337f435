import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startKeyCountersWorkerd, type KeyCountersWorkerd } from '../../tests/conformance/key-counters-workerd.ts';
import type { SpendCounterId } from '../../src/limits/budget-spend-counters.ts';

// The counters run inside workerd (tests/conformance/key-counters-test-worker.ts); each client here is its own
// connection pool, standing for one isolate.
describe('createDurableObjectSpendCounters (ToriiKeyCounters in workerd)', { timeout: 30_000 }, () => {
  let workerd: KeyCountersWorkerd;

  beforeAll(async () => {
    workerd = await startKeyCountersWorkerd();
  }, 60_000);

  afterAll(async () => {
    await workerd?.close();
  });

  /** How late an alarm may run on a busy test machine. */
  const alarmDelayMs = 3_000;
  const fresh = () => `spend:${randomUUID()}:`;
  const day: SpendCounterId = { keyId: 'key_1', periodLabel: '2025-06-01', ttlSeconds: 3_600 };

  it('sums additions from many concurrent callers exactly', async () => {
    const prefix = fresh();
    const clients = Array.from({ length: 6 }, () => workerd.spendCounters(prefix));
    // Binary fractions, so the sum is exact in any order and a lost update shows as a wrong total.
    const amounts = Array.from({ length: 240 }, (_unused, index) => 2 ** -(index % 7));
    await Promise.all(amounts.map((amount, index) => clients[index % clients.length]!.add(day, amount)));
    const expected = amounts.reduce((sum, amount) => sum + amount, 0);
    const totals = await Promise.all(clients.map((client) => client.read(day)));
    expect(totals).toEqual(clients.map(() => expected));
  });

  it('keeps keys and periods apart', async () => {
    const counters = workerd.spendCounters(fresh());
    await counters.add(day, 1);
    await counters.add({ ...day, periodLabel: 'total' }, 2);
    await counters.add({ ...day, keyId: 'key_2' }, 4);
    expect(await counters.read(day)).toBe(1);
    expect(await counters.read({ ...day, periodLabel: 'total' })).toBe(2);
    expect(await counters.read({ ...day, keyId: 'key_2' })).toBe(4);
    expect(await counters.read({ ...day, keyId: 'key_3' })).toBe(0);
  });

  it('raises to the ledger total but never lowers', async () => {
    const counters = workerd.spendCounters(fresh());
    expect(await counters.raiseTo(day, 0)).toBe(0);
    await counters.add(day, 5);
    expect(await counters.raiseTo(day, 3)).toBe(5);
    expect(await counters.read(day)).toBe(5);
    expect(await counters.raiseTo(day, 7.5)).toBe(7.5);
    await counters.add(day, 1);
    expect(await counters.read(day)).toBe(8.5);
    expect(await counters.raiseTo({ ...day, periodLabel: 'total' }, 2)).toBe(2);
  });

  it('raises concurrently with additions without losing any', async () => {
    const prefix = fresh();
    const clients = Array.from({ length: 4 }, () => workerd.spendCounters(prefix));
    await clients[0]!.add(day, 10);
    const work = [
      ...Array.from({ length: 40 }, (_unused, index) => clients[index % 4]!.add(day, 0.5)),
      // Below what is there already: must change nothing, whenever it lands.
      ...Array.from({ length: 10 }, (_unused, index) => clients[index % 4]!.raiseTo(day, 9)),
    ];
    await Promise.all(work);
    expect(await clients[1]!.read(day)).toBe(30);
  });

  it('keeps spend in durable storage: an evicted object comes back with it', async () => {
    const prefix = fresh();
    const counters = workerd.spendCounters(prefix);
    await counters.add(day, 1.25);
    await counters.raiseTo({ ...day, periodLabel: 'total' }, 40);
    await workerd.evict(`${prefix}key:key_1`);
    expect(await counters.read(day)).toBe(1.25);
    expect(await counters.read({ ...day, periodLabel: 'total' })).toBe(40);
    await counters.add(day, 0.75);
    expect(await counters.read(day)).toBe(2);
  });

  it('expires a counter its TTL after the last write, and the alarm deletes it', async () => {
    const prefix = fresh();
    const counters = workerd.spendCounters(prefix);
    const short = { ...day, ttlSeconds: 1 };
    const long = { ...day, periodLabel: 'total' };
    await counters.add(short, 3);
    await counters.add(long, 5);
    const objectName = `${prefix}key:key_1`;
    expect(await workerd.query(objectName, 'SELECT period FROM torii_spend ORDER BY period')).toEqual([
      { period: '2025-06-01' },
      { period: 'total' },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    // Expired for reads at once; deleted by the alarm as soon as it has run.
    expect(await counters.read(short)).toBe(0);
    expect(await counters.read(long)).toBe(5);
    await vi.waitFor(
      async () =>
        expect(await workerd.query(objectName, 'SELECT period FROM torii_spend')).toEqual([{ period: 'total' }]),
      { timeout: alarmDelayMs, interval: 100 },
    );
    // Written again after expiry, it starts from zero.
    await counters.add(short, 2);
    expect(await counters.read(short)).toBe(2);
  });

  it('sets the alarm for the earliest expiry even after the object was evicted', async () => {
    const prefix = fresh();
    const counters = workerd.spendCounters(prefix);
    const objectName = `${prefix}key:key_1`;
    await counters.add({ ...day, ttlSeconds: 1 }, 1);
    await workerd.evict(objectName);
    // A fresh instance writing a longer-lived counter must not push the alarm past the short one's expiry.
    await counters.add({ ...day, periodLabel: 'total' }, 1);
    await vi.waitFor(
      async () =>
        expect(await workerd.query(objectName, 'SELECT period FROM torii_spend')).toEqual([{ period: 'total' }]),
      { timeout: 1_000 + alarmDelayMs, interval: 100 },
    );
  });
});
