import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestPglite, type TestDatabase } from '../../tests/services/test-database.ts';
import { createDrizzleKeyStore } from '../db/drizzle-key-store.ts';
import { isGatewayError } from '../errors.ts';
import type { KeyStore } from './key-store.ts';
import { createKeyStoreLookupBatcher } from './key-store-lookup-batcher.ts';
import type { VirtualKeyRecord } from './virtual-key-record.ts';

/** A query the gated store received: which method, which hashes; `release` lets it go on to the real store. */
interface HeldQuery {
  method: 'findByHash' | 'findManyByHash';
  hashes: string[];
  release(failure?: Error): void;
}

/** The real Drizzle store, whose lookups wait until the test releases them (to fill the batcher on purpose). */
function gatedStore(store: KeyStore): Pick<KeyStore, 'findByHash' | 'findManyByHash'> & { held: HeldQuery[] } {
  const held: HeldQuery[] = [];
  const hold = (method: HeldQuery['method'], hashes: string[]) =>
    new Promise<void>((resolve, reject) =>
      held.push({ method, hashes, release: (failure) => (failure ? reject(failure) : resolve()) }),
    );
  return {
    held,
    async findByHash(hash) {
      await hold('findByHash', [hash]);
      return store.findByHash(hash);
    },
    async findManyByHash(hashes) {
      await hold('findManyByHash', [...hashes]);
      return store.findManyByHash(hashes);
    },
  };
}

const hashOf = (index: number) => index.toString(16).padStart(64, '0');
/** Waits until the gated store has received `count` queries (each released query goes on to a real database). */
const heldQueries = (gated: { held: HeldQuery[] }, count: number) =>
  vi.waitFor(() => expect(gated.held).toHaveLength(count), { timeout: 30_000, interval: 5 });

describe('createKeyStoreLookupBatcher (real Drizzle store on PGlite)', () => {
  let database: TestDatabase;
  let store: KeyStore;
  let known: VirtualKeyRecord[];

  beforeAll(async () => {
    database = await createTestPglite();
    store = createDrizzleKeyStore(database.db);
    known = await Promise.all(
      [1, 2, 3].map((index) =>
        store.create({ id: `key_${index}`, hash: hashOf(index), prefix: 'sk-torii-x', name: 'k' }),
      ),
    );
  }, 120_000);
  afterAll(() => database?.drop(), 120_000);

  it('sends a lookup at once and alone while there is room, with findByHash', async () => {
    const gated = gatedStore(store);
    const lookups = createKeyStoreLookupBatcher(gated, { maxConcurrent: 2 });
    const first = lookups.find(hashOf(1));
    const second = lookups.find(hashOf(1000));
    await heldQueries(gated, 2);
    expect(gated.held.map((query) => [query.method, query.hashes])).toEqual([
      ['findByHash', [hashOf(1)]],
      ['findByHash', [hashOf(1000)]],
    ]);
    for (const query of gated.held) query.release();
    expect(await first).toEqual(known[0]);
    expect(await second).toBeUndefined();
    expect(lookups.stats()).toEqual({ queries: 2, inFlight: 0, queued: 0, refused: 0 });
  });

  it('queues lookups past the limit and sends them in arrival order, in batches, as queries finish', async () => {
    const gated = gatedStore(store);
    const lookups = createKeyStoreLookupBatcher(gated, { maxConcurrent: 1, maxBatchSize: 3 });
    const hashes = [hashOf(2000), hashOf(2), hashOf(2001), hashOf(2002), hashOf(3), hashOf(2003), hashOf(2)];
    const found = hashes.map((hash) => lookups.find(hash));
    await heldQueries(gated, 1);
    expect(gated.held).toHaveLength(1);
    // The repeated hash shares its place in the queue.
    expect(lookups.stats()).toMatchObject({ inFlight: 1, queued: 5 });
    gated.held[0]!.release();
    await heldQueries(gated, 2);
    gated.held[1]!.release();
    await heldQueries(gated, 3);
    gated.held[2]!.release();
    expect(await Promise.all(found)).toEqual([
      undefined,
      known[1],
      undefined,
      undefined,
      known[2],
      undefined,
      known[1],
    ]);
    expect(gated.held.map((query) => [query.method, query.hashes])).toEqual([
      ['findByHash', [hashOf(2000)]],
      ['findManyByHash', [hashOf(2), hashOf(2001), hashOf(2002)]],
      ['findManyByHash', [hashOf(3), hashOf(2003)]],
    ]);
    expect(lookups.stats()).toEqual({ queries: 3, inFlight: 0, queued: 0, refused: 0 });
  });

  it('fails every lookup of a failed query, and carries on with the next ones', async () => {
    const gated = gatedStore(store);
    const lookups = createKeyStoreLookupBatcher(gated, { maxConcurrent: 1 });
    const first = lookups.find(hashOf(1));
    const queued = [lookups.find(hashOf(2)), lookups.find(hashOf(3))];
    await heldQueries(gated, 1);
    gated.held[0]!.release(new Error('connection reset'));
    await expect(first).rejects.toThrow('connection reset');
    await heldQueries(gated, 2);
    gated.held[1]!.release(new Error('connection refused'));
    for (const lookup of queued) await expect(lookup).rejects.toThrow('connection refused');
    const after = lookups.find(hashOf(3));
    await heldQueries(gated, 3);
    gated.held[2]!.release();
    expect(await after).toEqual(known[2]);
    expect(lookups.stats()).toMatchObject({ inFlight: 0, queued: 0 });
  });

  it('refuses past the queue with a 503 key_lookup_busy, reported at most once per interval', async () => {
    const gated = gatedStore(store);
    let clock = 0;
    const reports: number[] = [];
    const lookups = createKeyStoreLookupBatcher(gated, {
      maxConcurrent: 1,
      maxQueued: 2,
      monotonicNow: () => clock,
      onRefusals: (refused) => reports.push(refused),
    });
    const accepted = [lookups.find(hashOf(1)), lookups.find(hashOf(2)), lookups.find(hashOf(3))];
    // A hash already queued joins it even when the queue is full.
    accepted.push(lookups.find(hashOf(2)));
    const refusals = await Promise.allSettled([4, 5, 6].map((index) => lookups.find(hashOf(4000 + index))));
    for (const refusal of refusals) {
      expect(refusal.status).toBe('rejected');
      const error = (refusal as PromiseRejectedResult).reason;
      expect(isGatewayError(error) && error).toMatchObject({
        status: 503,
        code: 'key_lookup_busy',
        type: 'api_error',
        retryable: true,
        headers: { 'retry-after': '1' },
      });
    }
    clock += 10_000;
    await lookups.find(hashOf(4007)).catch(() => {});
    await expect(lookups.findMany([hashOf(4008), hashOf(4009)])).rejects.toMatchObject({ code: 'key_lookup_busy' });
    expect(reports).toEqual([1, 3]);
    expect(lookups.stats()).toMatchObject({ refused: 6, queued: 2, inFlight: 1 });
    gated.held[0]!.release();
    await heldQueries(gated, 2);
    gated.held[1]!.release();
    expect(await Promise.all(accepted)).toEqual([known[0], known[1], known[2], known[1]]);
  });

  it('looks a group up in one query, and returns the records found', async () => {
    const gated = gatedStore(store);
    const lookups = createKeyStoreLookupBatcher(gated);
    const found = lookups.findMany([hashOf(1), hashOf(5000), hashOf(3), hashOf(1)]);
    await heldQueries(gated, 1);
    expect(gated.held.map((query) => [query.method, query.hashes])).toEqual([
      ['findManyByHash', [hashOf(1), hashOf(5000), hashOf(3)]],
    ]);
    gated.held[0]!.release();
    expect(await found).toEqual(expect.arrayContaining([known[0], known[2]]));
    expect(await found).toHaveLength(2);
  });

  it('refuses limits that are not whole numbers from 1', () => {
    expect(() => createKeyStoreLookupBatcher(store, { maxConcurrent: 0 })).toThrow(RangeError);
    expect(() => createKeyStoreLookupBatcher(store, { maxBatchSize: 1.5 })).toThrow(RangeError);
    expect(() => createKeyStoreLookupBatcher(store, { maxQueued: -1 })).toThrow(RangeError);
    expect(() => createKeyStoreLookupBatcher(store, { maxQueued: Number.POSITIVE_INFINITY })).not.toThrow();
  });
});
