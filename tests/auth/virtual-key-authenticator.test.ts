import { hash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyAdministration, type KeyAdministration } from '../../src/auth/key-administration.ts';
import type { KeyStore } from '../../src/auth/key-store.ts';
import { createLocalKeyInvalidationBus } from '../../src/auth/local-key-invalidation-bus.ts';
import {
  createVirtualKeyAuthenticator,
  type VirtualKeyAuthenticator,
  type VirtualKeyAuthenticatorOptions,
} from '../../src/auth/virtual-key-authenticator.ts';
import { maxPresentedSecretLength } from '../../src/auth/presented-secret.ts';
import { generateVirtualKeySecret } from '../../src/auth/virtual-key-secret.ts';
import { createMemoryKeyValueCache } from '../../src/cache/memory-key-value-cache.ts';
import { createDrizzleKeyStore } from '../../src/db/drizzle-key-store.ts';
import { isGatewayError } from '../../src/errors.ts';
import { createTestPglite, type TestDatabase } from '../services/test-database.ts';

const masterKey = 'sk-master-for-tests';
const nodeSha256 = (text: string) => hash('sha256', text, 'buffer');
/** PGlite takes seconds to start on a busy machine: the hooks wait for it far longer than vitest's 10 s default. */
const hookTimeoutMs = 120_000;

/** The real Drizzle store, with a count of the calls that reach it. */
function countingStore(store: KeyStore): KeyStore & { findByHashCalls: () => number } {
  let calls = 0;
  return {
    ...store,
    findByHash(keyHash) {
      calls++;
      return store.findByHash(keyHash);
    },
    findByHashCalls: () => calls,
  };
}

/** The byte digest, recording every text it hashes in `hashed`. */
function recordingSha256(hashed: string[]): (text: string) => ReturnType<typeof nodeSha256> {
  return (text) => {
    hashed.push(text);
    return nodeSha256(text);
  };
}

/** The hex digest, recording every text it hashes in `hashed`. */
function recordingSha256Hex(hashed: string[]): (text: string) => string {
  return (text) => {
    hashed.push(text);
    return hash('sha256', text, 'hex');
  };
}

async function statusOf(attempt: () => unknown): Promise<number | 'ok'> {
  try {
    await attempt();
    return 'ok';
  } catch (error) {
    if (isGatewayError(error)) return error.status;
    throw error;
  }
}

async function errorOf(attempt: () => unknown): Promise<unknown> {
  try {
    await attempt();
  } catch (error) {
    return error;
  }
  throw new Error('expected a refusal');
}

describe('virtual key authenticator (real Drizzle store on PGlite)', () => {
  let database: TestDatabase;
  let store: ReturnType<typeof countingStore>;
  let administration: KeyAdministration;
  let authenticator: VirtualKeyAuthenticator;
  const sharedCache = createMemoryKeyValueCache({ maxEntries: 1000 });
  const invalidations = createLocalKeyInvalidationBus();

  const makeAuthenticator = (overrides: Partial<VirtualKeyAuthenticatorOptions> = {}) =>
    createVirtualKeyAuthenticator({ masterKey, store, sharedCache, invalidations, sha256: nodeSha256, ...overrides });

  beforeAll(async () => {
    database = await createTestPglite();
    store = countingStore(createDrizzleKeyStore(database.db));
    administration = createKeyAdministration({ store, sharedCache, invalidations, sha256: nodeSha256 });
    authenticator = makeAuthenticator();
  }, hookTimeoutMs);
  afterAll(async () => {
    authenticator.close();
    await database?.drop();
  }, hookTimeoutMs);

  it('accepts the master key and refuses a missing or malformed key without any lookup', async () => {
    expect(authenticator.authenticate(masterKey)).toMatchObject({ kind: 'master', subject: 'master' });
    const before = store.findByHashCalls();
    expect(await statusOf(() => authenticator.authenticate(undefined))).toBe(401);
    expect(await statusOf(() => authenticator.authenticate('sk-not-ours'))).toBe(401);
    // Right prefix and length, wrong checksum: refused from the shape alone.
    for (let attempt = 0; attempt < 1000; attempt++) {
      const forged = `sk-torii-${crypto.randomUUID().replaceAll('-', '')}abcdefghijk`;
      expect(await statusOf(() => authenticator.authenticate(forged))).toBe(401);
    }
    expect(store.findByHashCalls()).toBe(before);
  });

  it('answers the master key without hashing it, and hashes every other secret once', async () => {
    const hashed: string[] = [];
    const counting = makeAuthenticator({
      sha256: recordingSha256(hashed),
    });
    hashed.length = 0;
    for (let attempt = 0; attempt < 3; attempt++)
      expect(counting.authenticate(masterKey)).toMatchObject({ kind: 'master' });
    expect(hashed).toEqual([]);
    // A near miss of the master key is a secret like any other: hashed, refused.
    expect(await statusOf(() => counting.authenticate(`${masterKey}x`))).toBe(401);
    expect(hashed).toEqual([`${masterKey}x`]);
    counting.close();
  });

  it('hashes with sha256Hex when given (the byte digest is not called) and finds the same keys', async () => {
    const issued = await administration.create({ name: 'hex' });
    const byteDigests: string[] = [];
    const withHex = makeAuthenticator({
      sha256: recordingSha256(byteDigests),
      sha256Hex: (text) => hash('sha256', text, 'hex'),
    });
    expect(await withHex.authenticate(issued.secret)).toMatchObject({ kind: 'virtual-key', subject: issued.record.id });
    expect(await statusOf(() => withHex.authenticate(`${issued.secret}x`))).toBe(401);
    expect(byteDigests).toEqual([]);
    withHex.close();
  });

  it('stops hashing a warm key, still refuses it at once when revoked, and never remembers made-up keys', async () => {
    const issued = await administration.create({ name: 'warm' });
    const hashed: string[] = [];
    const counting = makeAuthenticator({
      sha256Hex: recordingSha256Hex(hashed),
    });
    for (let attempt = 0; attempt < 5; attempt++)
      expect(await counting.authenticate(issued.secret)).toMatchObject({ subject: issued.record.id });
    // The lookup and the first local hit hash it; every later request finds its hash by the secret.
    expect(hashed.filter((text) => text === issued.secret)).toHaveLength(2);
    await administration.update(issued.record.id, { disabled: true });
    expect(await statusOf(() => counting.authenticate(issued.secret))).toBe(401);
    await administration.update(issued.record.id, { disabled: false });
    expect(await statusOf(() => counting.authenticate(issued.secret))).toBe('ok');
    await administration.revoke(issued.record.id);
    expect(await statusOf(() => counting.authenticate(issued.secret))).toBe(401);
    expect(await statusOf(() => counting.authenticate(issued.secret))).toBe(401);
    // A well-formed key nobody issued is hashed on every attempt: only keys that authenticated are remembered.
    const madeUp = generateVirtualKeySecret().secret;
    hashed.length = 0;
    for (let attempt = 0; attempt < 3; attempt++) expect(await statusOf(() => counting.authenticate(madeUp))).toBe(401);
    expect(hashed).toEqual([madeUp, madeUp, madeUp]);
    counting.close();
  });

  it('refuses a secret longer than the limit with the usual 401, without hashing or looking it up', async () => {
    const hashed: string[] = [];
    const counting = makeAuthenticator({
      sha256: recordingSha256(hashed),
    });
    hashed.length = 0;
    const before = store.findByHashCalls();
    const { secret } = generateVirtualKeySecret();
    for (const oversized of [secret + ' '.repeat(16_000) + 'b', 'k'.repeat(maxPresentedSecretLength + 1)]) {
      expect(await statusOf(() => counting.authenticate(oversized))).toBe(401);
      expect(await errorOf(() => counting.authenticate(oversized))).toMatchObject({
        code: 'invalid_api_key',
        message: 'Incorrect API key provided.',
      });
    }
    expect(hashed).toEqual([]);
    expect(store.findByHashCalls()).toBe(before);
    counting.close();
  });

  it('looks a new key up once, then answers synchronously from memory', async () => {
    const { record, secret } = await administration.create({ name: 'warm', allowedModelGroups: ['fast'] });
    const fresh = makeAuthenticator();
    const before = store.findByHashCalls();
    const first = await fresh.authenticate(secret);
    expect(first).toMatchObject({ kind: 'virtual-key', subject: record.id });
    expect(first.allowedModelGroups).toEqual(new Set(['fast']));
    const second = fresh.authenticate(secret);
    expect(second).not.toBeInstanceOf(Promise);
    expect(store.findByHashCalls() - before).toBe(1);
    // A second process (fresh local tier) finds the record in the shared tier, not the store.
    const other = makeAuthenticator();
    await other.authenticate(secret);
    expect(store.findByHashCalls() - before).toBe(1);
    expect(other.lookups()).toMatchObject({ shared: 1, store: 0 });
    fresh.close();
    other.close();
  });

  it('caches unknown well-formed keys as negative entries, and concurrent misses share one lookup', async () => {
    const unknown = generateVirtualKeySecret().secret;
    const fresh = makeAuthenticator();
    const before = store.findByHashCalls();
    const statuses = await Promise.all(Array.from({ length: 200 }, () => statusOf(() => fresh.authenticate(unknown))));
    expect(new Set(statuses)).toEqual(new Set([401]));
    for (let attempt = 0; attempt < 500; attempt++) await statusOf(() => fresh.authenticate(unknown));
    expect(store.findByHashCalls() - before).toBe(1);
    fresh.close();
  });

  it('remembers unknown keys apart, so more of them than the local tier holds never evict a known key', async () => {
    const { record, secret } = await administration.create({ name: 'kept' });
    const small = makeAuthenticator({ localMaxEntries: 100, sharedCache: undefined });
    await small.authenticate(secret);
    const unknown = Array.from({ length: 300 }, () => generateVirtualKeySecret().secret);
    for (const forged of unknown) expect(await statusOf(() => small.authenticate(forged))).toBe(401);
    const before = store.findByHashCalls();
    // Still in memory: answered synchronously, without a lookup.
    expect(small.authenticate(secret)).toMatchObject({ subject: record.id });
    // The most recent unknown keys are remembered too.
    for (const forged of unknown.slice(-100)) expect(await statusOf(() => small.authenticate(forged))).toBe(401);
    expect(store.findByHashCalls()).toBe(before);
    small.close();
    // 300 lookups in the embedded database one after another: 1-2 s on a quiet machine, past 5 s on a busy one.
  }, 60_000);

  it('refuses a revoked, disabled or expired key at once in every process that shares the bus', async () => {
    const { record, secret } = await administration.create({ name: 'doomed' });
    const processes = [makeAuthenticator(), makeAuthenticator()];
    for (const each of processes) await each.authenticate(secret);
    await administration.update(record.id, { disabled: true });
    for (const each of processes) expect(await statusOf(() => each.authenticate(secret))).toBe(401);
    await administration.update(record.id, { disabled: false });
    for (const each of processes) expect(await statusOf(() => each.authenticate(secret))).toBe('ok');
    await administration.revoke(record.id);
    for (const each of processes) expect(await statusOf(() => each.authenticate(secret))).toBe(401);
    // A process that never saw the key finds the revoked record in the shared tier.
    const late = makeAuthenticator();
    expect(await statusOf(() => late.authenticate(secret))).toBe(401);

    const expiring = await administration.create({ name: 'short-lived', expiresAt: Date.now() + 60_000 });
    let clock = Date.now();
    const timed = makeAuthenticator({ now: () => clock });
    expect(await statusOf(() => timed.authenticate(expiring.secret))).toBe('ok');
    clock += 61_000;
    expect(await statusOf(() => timed.authenticate(expiring.secret))).toBe(401);
    for (const each of [...processes, late, timed]) each.close();
  });

  it('rotation retires the old secret everywhere and the new one works', async () => {
    const { record, secret } = await administration.create({ name: 'rotating' });
    const processes = [makeAuthenticator(), makeAuthenticator()];
    for (const each of processes) await each.authenticate(secret);
    const rotated = await administration.rotate(record.id);
    expect(rotated?.record.version).toBeGreaterThan(record.version);
    for (const each of processes) {
      expect(await statusOf(() => each.authenticate(secret))).toBe(401);
      expect(await statusOf(() => each.authenticate(rotated!.secret))).toBe('ok');
    }
    for (const each of processes) each.close();
  });

  it('a lookup that read the old record before a change cannot put it back', async () => {
    const { record, secret } = await administration.create({ name: 'racing' });
    const gate: { releaseRead?: () => void } = {};
    const slowStore: KeyStore = {
      ...store,
      async findByHash(keyHash) {
        const found = await store.findByHash(keyHash);
        await new Promise<void>((resolve) => (gate.releaseRead = resolve));
        return found;
      },
    };
    // No shared tier: the slow read goes straight to the store.
    const racing = makeAuthenticator({ store: slowStore, sharedCache: undefined });
    const pending = racing.authenticate(secret) as Promise<unknown>;
    await new Promise((resolve) => setTimeout(resolve, 50));
    await administration.revoke(record.id);
    gate.releaseRead!();
    await pending;
    // The stale (unrevoked) record was not cached: the next call reads the store again and refuses.
    delete gate.releaseRead;
    const next = statusOf(() => racing.authenticate(secret));
    await new Promise((resolve) => setTimeout(resolve, 50));
    (gate.releaseRead as (() => void) | undefined)?.();
    expect(await next).toBe(401);
    racing.close();
  });

  it('answers 503, not 500, when the store is unreachable and the key is not cached', async () => {
    const broken: KeyStore = {
      ...store,
      findByHash: () => Promise.reject(new Error('connection refused')),
    };
    const unreachable = makeAuthenticator({ store: broken, sharedCache: undefined });
    expect(await statusOf(() => unreachable.authenticate(generateVirtualKeySecret().secret))).toBe(503);
    unreachable.close();
  });
});
