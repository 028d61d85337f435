import { hash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyAdministration, type KeyAdministration } from '../../src/auth/key-administration.ts';
import type { KeyStore } from '../../src/auth/key-store.ts';
import { createLocalKeyInvalidationBus } from '../../src/auth/local-key-invalidation-bus.ts';
import {
  createVirtualKeyAuthenticator,
  type VirtualKeyAuthenticatorOptions,
} from '../../src/auth/virtual-key-authenticator.ts';
import { generateVirtualKeySecret, isWellFormedVirtualKeySecret } from '../../src/auth/virtual-key-secret.ts';
import { createMemoryKeyValueCache } from '../../src/cache/memory-key-value-cache.ts';
import { createDrizzleKeyStore } from '../../src/db/drizzle-key-store.ts';
import { isGatewayError } from '../../src/errors.ts';
import { createTestDatabase, type TestDatabase } from '../services/test-database.ts';

/**
 * Issue 8, item 11: forged keys (the checksum is a public CRC-32, so anyone can mint well-formed keys) must not turn
 * into one Postgres query each. A flood of distinct forged keys against the real authenticator over the real
 * Drizzle store on the real Postgres server; every query that reaches the store is counted.
 */

const masterKey = 'sk-master-for-flood-tests';
const nodeSha256 = (text: string) => hash('sha256', text, 'buffer');
const hookTimeoutMs = 120_000;

/** The real Drizzle store; every call that reaches Postgres to look keys up by hash is one query, and is counted. */
function countingStore(store: KeyStore): KeyStore & { queries: () => number; largestBatch: () => number } {
  let queries = 0;
  let largestBatch = 0;
  return {
    ...store,
    findByHash(keyHash) {
      queries++;
      largestBatch = Math.max(largestBatch, 1);
      return store.findByHash(keyHash);
    },
    findManyByHash(hashes) {
      queries++;
      largestBatch = Math.max(largestBatch, hashes.length);
      return store.findManyByHash(hashes);
    },
    queries: () => queries,
    largestBatch: () => largestBatch,
  };
}

type Outcome = { status: 'ok'; subject: string } | { status: number; code: string | null; retryAfter?: string };

async function outcomeOf(attempt: () => unknown): Promise<Outcome> {
  try {
    const caller = (await attempt()) as { subject: string };
    return { status: 'ok', subject: caller.subject };
  } catch (error) {
    if (!isGatewayError(error)) throw error;
    return {
      status: error.status,
      code: error.code,
      ...(error.headers?.['retry-after'] === undefined ? {} : { retryAfter: error.headers['retry-after'] }),
    };
  }
}

/** Well-formed keys no one issued: made by the real key-format code, so the checksum is valid. */
function forgedKeys(count: number): string[] {
  const keys = Array.from({ length: count }, () => generateVirtualKeySecret().secret);
  expect(keys.every(isWellFormedVirtualKeySecret)).toBe(true);
  expect(new Set(keys).size).toBe(count);
  return keys;
}

describe('a flood of forged well-formed keys (real Drizzle store on Postgres)', () => {
  let database: TestDatabase;
  let store: ReturnType<typeof countingStore>;
  let administration: KeyAdministration;
  const invalidations = createLocalKeyInvalidationBus();

  const makeAuthenticator = (overrides: Partial<VirtualKeyAuthenticatorOptions> = {}) =>
    createVirtualKeyAuthenticator({ masterKey, store, invalidations, sha256: nodeSha256, ...overrides });

  beforeAll(async () => {
    database = await createTestDatabase();
    store = countingStore(createDrizzleKeyStore(database.db));
    administration = createKeyAdministration({ store, invalidations, sha256: nodeSha256 });
  }, hookTimeoutMs);
  afterAll(async () => {
    await database?.drop();
  }, hookTimeoutMs);

  it.each([
    ['without a shared cache', false],
    ['with a shared cache', true],
  ])(
    '20,000 distinct forged keys at once cost a bounded number of queries, and valid keys in the flood get in (%s)',
    async (_case, withSharedCache) => {
      const warm = await Promise.all(
        Array.from({ length: 10 }, (_, index) => administration.create({ name: `warm-${index}` })),
      );
      const cold = await Promise.all(
        Array.from({ length: 10 }, (_, index) => administration.create({ name: `cold-${index}` })),
      );
      const forged = forgedKeys(20_000);
      // A queue long enough for the whole burst: this test is about the number of queries (the next one is about
      // what happens past the queue).
      const authenticator = makeAuthenticator({
        storeLookup: { maxQueued: 25_000 },
        ...(withSharedCache ? { sharedCache: createMemoryKeyValueCache({ maxEntries: 100_000 }) } : {}),
      });
      for (const key of warm)
        expect(await outcomeOf(() => authenticator.authenticate(key.secret))).toMatchObject({ status: 'ok' });
      const before = store.queries();

      // Every 1,000th request is a valid key, alternately one already cached and one never seen.
      const flood: { secret: string; expected: string | undefined }[] = [];
      forged.forEach((secret, index) => {
        flood.push({ secret, expected: undefined });
        if (index % 1000 !== 500) return;
        const round = Math.floor(index / 1000);
        const valid = round % 2 === 0 ? warm[round / 2]! : cold[(round - 1) / 2]!;
        flood.push({ secret: valid.secret, expected: valid.record.id });
      });
      const outcomes = await Promise.all(
        flood.map(({ secret }) => outcomeOf(() => authenticator.authenticate(secret))),
      );

      const queries = store.queries() - before;
      const bound = Math.ceil(20_000 / 500) + 4 + 4;
      expect(queries, `store queries for 20,000 forged keys (bound ${bound})`).toBeLessThanOrEqual(bound);
      expect(store.largestBatch()).toBeLessThanOrEqual(500);
      flood.forEach(({ expected }, index) => {
        const outcome = outcomes[index]!;
        if (expected === undefined) expect(outcome).toEqual({ status: 401, code: 'invalid_api_key' });
        else expect(outcome).toEqual({ status: 'ok', subject: expected });
      });
      // The unknown hashes are negative entries now: the same flood again costs no query at all.
      const again = await Promise.all(forged.map((secret) => outcomeOf(() => authenticator.authenticate(secret))));
      expect(new Set(again.map((outcome) => outcome.status))).toEqual(new Set([401]));
      expect(store.queries() - before).toBe(queries);
      authenticator.close();
    },
    120_000,
  );

  it('past the queue, unknown keys get 503 key_lookup_busy with retry-after; cached keys never notice', async () => {
    const warm = await administration.create({ name: 'warm-busy' });
    const cold = await administration.create({ name: 'cold-busy' });
    const refusals: string[] = [];
    const authenticator = makeAuthenticator({
      storeLookup: { maxConcurrent: 4, maxQueued: 1_000 },
      onLookupProblem: (problem) => refusals.push(problem),
    });
    expect(await outcomeOf(() => authenticator.authenticate(warm.secret))).toMatchObject({ status: 'ok' });
    const forged = forgedKeys(5_000);
    const before = store.queries();
    // The cold key arrives early in the burst (it is queued); the warm one in the middle (answered from memory).
    const burst = [
      ...forged.slice(0, 100),
      cold.secret,
      ...forged.slice(100, 2_500),
      warm.secret,
      ...forged.slice(2_500),
    ];
    const outcomes = await Promise.all(burst.map((secret) => outcomeOf(() => authenticator.authenticate(secret))));

    expect(outcomes[100]).toEqual({ status: 'ok', subject: cold.record.id });
    expect(outcomes[2_501]).toEqual({ status: 'ok', subject: warm.record.id });
    const forgedOutcomes = outcomes.filter((_, index) => index !== 100 && index !== 2_501);
    const looked = forgedOutcomes.filter((outcome) => outcome.status === 401);
    const busy = forgedOutcomes.filter((outcome) => outcome.status === 503);
    // 4 went out alone at once, 1,000 (the cold key among them) waited in the queue, the rest were refused.
    expect(looked.length + 1).toBe(4 + 1_000);
    expect(busy.length).toBe(5_000 - 1_003);
    expect(new Set(busy.map((outcome) => JSON.stringify(outcome)))).toEqual(
      new Set([JSON.stringify({ status: 503, code: 'key_lookup_busy', retryAfter: '1' })]),
    );
    expect(store.queries() - before).toBeLessThanOrEqual(4 + Math.ceil(1_000 / 500) + 2);
    // Refusals are reported, but not one line each.
    expect(refusals.length).toBeGreaterThanOrEqual(1);
    expect(refusals.length).toBeLessThan(5);
    expect(authenticator.storeLookups()).toMatchObject({ refused: busy.length, queued: 0, inFlight: 0 });
    // Refused keys were not remembered as unknown: asked again, they are looked up (and found unknown).
    const retried = await outcomeOf(() => authenticator.authenticate(forged.at(-1)!));
    expect(retried).toEqual({ status: 401, code: 'invalid_api_key' });
    authenticator.close();
  }, 120_000);
});
