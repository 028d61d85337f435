/**
 * The one conformance suite of the `KeyValueCache` seam (src/cache/key-value-cache.ts). Every implementation calls
 * {@link describeKeyValueCacheConformance} from the test beside it: memory, Redis (ioredis), Upstash REST (through
 * tests/upstash-bridge in front of a real Redis) and Workers KV (workerd's simulated KV through wrangler's
 * `getPlatformProxy`).
 *
 * What differs is declared by the subject: whether `setIfAbsent` is atomic (Workers KV's is get-then-put, so the
 * concurrent race is asserted only where the store promises it) and whether the store has the optional `getMany`
 * (Workers KV has no multi-get): its tests are skipped only for a subject that declares it has none, and a subject
 * that declares one must have it.
 *
 * TTL tests use 1-second TTLs and a short poll, so a store that honours TTLs exactly finishes them in about a second
 * (Redis expires a key within a millisecond of its time once it is read).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyValueCache } from '../../src/cache/key-value-cache.ts';

/** A store under test. */
export interface KeyValueCacheSubject {
  /**
   * A cache over a namespace no other call sees (a fresh prefix, or a fresh instance), so tests never share keys.
   * Called once per test.
   */
  createCache(): KeyValueCache;
  /** Whether concurrent `setIfAbsent` calls on one key store exactly one value (false only for Workers KV). */
  atomicSetIfAbsent: boolean;
  /** Whether the cache implements the optional `getMany` (false only for Workers KV). */
  getMany: boolean;
  /** Releases connections, servers and child processes. */
  close(): Promise<void>;
}

/** Polls `read` until it answers undefined, for at most `timeoutMs`; answers how long that took. */
async function waitUntilGone(read: () => Promise<string | undefined>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    if ((await read()) === undefined) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`still present after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const long = { ttlSeconds: 300 };
const oneSecond = { ttlSeconds: 1 };

/** Values that trip stores and clients which parse, re-encode or trim what they carry. */
const awkwardValues = [
  '',
  ' ',
  'OK',
  'T0s=',
  '123',
  '1.50',
  '-0',
  '1e3',
  'null',
  'true',
  '"quoted"',
  '{"a": 1, "b": [1, 2]}',
  '[1,2,3]',
  'line one\nline two\r\n',
  'tab\tand\u0000nul',
  'héllo wörld',
  '日本語のテキスト',
  '👩‍👩‍👧‍👦 family, 🇯🇵 flag',
  'e\u0301 (combining accent)',
  '\\u0041 is not A',
  '%41%20+&=?#',
];

/** Keys with characters that break URL paths, REST routes and naive escaping. */
const awkwardKeys = [
  'with space',
  'with/slash/and/../dots',
  'query?x=1&y=2#fragment',
  'percent%2Fencoded',
  'colon:separated:key',
  'ключ-юникод-鍵-🔑',
  'quote"and\'apostrophe',
  'back\\slash',
  'newline\nkey',
  'UPPER',
  'upper',
  '.',
  '..',
  'a'.repeat(200),
];

/**
 * Defines the conformance tests for one `KeyValueCache` implementation.
 *
 * @example
 * ```ts
 * describeKeyValueCacheConformance('memory', async () => ({
 *   createCache: () => createMemoryKeyValueCache({ maxEntries: 1_000 }),
 *   atomicSetIfAbsent: true,
 *   getMany: true,
 *   close: async () => {},
 * }));
 * ```
 */
export function describeKeyValueCacheConformance(name: string, open: () => Promise<KeyValueCacheSubject>): void {
  describe(`KeyValueCache conformance: ${name}`, () => {
    let subject: KeyValueCacheSubject;

    beforeAll(async () => {
      subject = await open();
    }, 120_000);

    afterAll(async () => {
      await subject?.close();
    }, 60_000);

    it('answers undefined for a key never set', async () => {
      const cache = subject.createCache();
      expect(await cache.get('never-set')).toBeUndefined();
    });

    it('stores a value and replaces it on set', async () => {
      const cache = subject.createCache();
      await cache.set('key', 'first', long);
      expect(await cache.get('key')).toBe('first');
      await cache.set('key', 'second', long);
      expect(await cache.get('key')).toBe('second');
    });

    it('keeps keys apart, case included', async () => {
      const cache = subject.createCache();
      await cache.set('a', 'value of a', long);
      await cache.set('A', 'value of A', long);
      await cache.set('b', 'value of b', long);
      expect(await cache.get('a')).toBe('value of a');
      expect(await cache.get('A')).toBe('value of A');
      expect(await cache.get('b')).toBe('value of b');
    });

    it('keeps the namespaces of two caches apart', async () => {
      const first = subject.createCache();
      const second = subject.createCache();
      await first.set('shared-name', 'in the first', long);
      expect(await second.get('shared-name')).toBeUndefined();
      await second.set('shared-name', 'in the second', long);
      expect(await first.get('shared-name')).toBe('in the first');
      expect(await second.setIfAbsent('shared-name', 'again', long)).toBe(false);
      await second.delete('shared-name');
      expect(await first.get('shared-name')).toBe('in the first');
    });

    it('deletes a key, and deleting a missing key succeeds', async () => {
      const cache = subject.createCache();
      await cache.set('key', 'value', long);
      await cache.delete('key');
      expect(await cache.get('key')).toBeUndefined();
      await expect(cache.delete('key')).resolves.toBeUndefined();
      await expect(cache.delete('never-set')).resolves.toBeUndefined();
    });

    it('stores with setIfAbsent only when the key holds nothing', async () => {
      const cache = subject.createCache();
      expect(await cache.setIfAbsent('key', 'first', long)).toBe(true);
      expect(await cache.get('key')).toBe('first');
      expect(await cache.setIfAbsent('key', 'second', long)).toBe(false);
      expect(await cache.get('key')).toBe('first');
      await cache.set('key', 'third', long);
      expect(await cache.setIfAbsent('key', 'fourth', long)).toBe(false);
      expect(await cache.get('key')).toBe('third');
      await cache.delete('key');
      expect(await cache.setIfAbsent('key', 'fifth', long)).toBe(true);
      expect(await cache.get('key')).toBe('fifth');
    });

    it('treats an empty string as a value, not as absence', async () => {
      const cache = subject.createCache();
      await cache.set('empty', '', long);
      expect(await cache.get('empty')).toBe('');
      expect(await cache.setIfAbsent('empty', 'other', long)).toBe(false);
      expect(await cache.get('empty')).toBe('');
    });

    it('returns every value exactly as stored: unicode, JSON-looking, numeric-looking, control characters', async () => {
      const cache = subject.createCache();
      await Promise.all(awkwardValues.map((value, index) => cache.set(`value-${index}`, value, long)));
      const read = await Promise.all(awkwardValues.map((_value, index) => cache.get(`value-${index}`)));
      expect(read).toEqual(awkwardValues);
    });

    it('stores under keys with odd characters, each distinct from the others', async () => {
      const cache = subject.createCache();
      await Promise.all(awkwardKeys.map((key, index) => cache.set(key, `value ${index}`, long)));
      const read = await Promise.all(awkwardKeys.map((key) => cache.get(key)));
      expect(read).toEqual(awkwardKeys.map((_key, index) => `value ${index}`));
      await cache.delete('with/slash/and/../dots');
      expect(await cache.get('with/slash/and/../dots')).toBeUndefined();
      expect(await cache.get('..')).toBe(`value ${awkwardKeys.indexOf('..')}`);
    });

    it('stores large values: 1 MiB of ASCII and 512 Ki multi-byte characters', async () => {
      const cache = subject.createCache();
      const ascii = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(29_128).slice(0, 1_048_576);
      const multiByte = 'é日🔑'.repeat(131_072);
      await cache.set('ascii', ascii, long);
      await cache.set('multi-byte', multiByte, long);
      const [readAscii, readMultiByte] = await Promise.all([cache.get('ascii'), cache.get('multi-byte')]);
      expect(readAscii?.length).toBe(ascii.length);
      expect(readAscii === ascii).toBe(true);
      expect(readMultiByte?.length).toBe(multiByte.length);
      expect(readMultiByte === multiByte).toBe(true);
    }, 30_000);

    it('expires entries after their TTL; a later write with a longer TTL replaces the short one', async () => {
      const cache = subject.createCache();
      await Promise.all([
        cache.set('short', 'goes away', oneSecond),
        cache.setIfAbsent('short-if-absent', 'goes away too', oneSecond),
        cache.set('long', 'stays', long),
        cache.set('renewed', 'short at first', oneSecond).then(() => cache.set('renewed', 'stays too', long)),
      ]);
      expect(await cache.get('short')).toBe('goes away');
      expect(await cache.get('short-if-absent')).toBe('goes away too');

      const tookMs = await waitUntilGone(() => cache.get('short'), 4_000);
      await waitUntilGone(() => cache.get('short-if-absent'), 1_000);
      expect(tookMs).toBeLessThan(4_000);
      expect(await cache.get('long')).toBe('stays');
      expect(await cache.get('renewed')).toBe('stays too');
      // An expired key is absent for setIfAbsent too.
      expect(await cache.setIfAbsent('short', 'back again', long)).toBe(true);
      expect(await cache.get('short')).toBe('back again');
    }, 15_000);

    it('refuses a TTL that is not a whole number of seconds from 1, and stores nothing then', async () => {
      const cache = subject.createCache();
      for (const ttlSeconds of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await expect(cache.set('bad-ttl', 'value', { ttlSeconds })).rejects.toThrow(RangeError);
        await expect(cache.setIfAbsent('bad-ttl', 'value', { ttlSeconds })).rejects.toThrow(RangeError);
      }
      expect(await cache.get('bad-ttl')).toBeUndefined();
    });

    it('lets exactly one of 25 concurrent setIfAbsent calls win, where the store is atomic', async () => {
      const cache = subject.createCache();
      const attempts = Array.from({ length: 25 }, (_unused, index) => `writer ${index}`);
      const outcomes = await Promise.all(attempts.map((value) => cache.setIfAbsent('contended', value, long)));
      const stored = await cache.get('contended');
      expect(attempts).toContain(stored);
      if (subject.atomicSetIfAbsent) {
        expect(outcomes.filter(Boolean)).toHaveLength(1);
        expect(attempts[outcomes.indexOf(true)]).toBe(stored);
      } else {
        // Get-then-put: several may believe they won, but the key holds one of their values.
        expect(outcomes.filter(Boolean).length).toBeGreaterThanOrEqual(1);
        expect(attempts.filter((_value, index) => outcomes[index])).toContain(stored);
      }
    });

    it('has getMany exactly when the subject says so', () => {
      expect(typeof subject.createCache().getMany).toBe(subject.getMany ? 'function' : 'undefined');
    });

    it('reads many keys at once with getMany, in order, undefined for absent ones', async (context) => {
      if (!subject.getMany) context.skip();
      const cache = subject.createCache();
      expect(await cache.getMany!([])).toEqual([]);
      await cache.set('a', 'value of a', long);
      await cache.set('c', '', long);
      await cache.set('A', 'value of A', long);
      expect(await cache.getMany!(['a', 'b', 'c', 'A', 'a'])).toEqual([
        'value of a',
        undefined,
        '',
        'value of A',
        'value of a',
      ]);
      await cache.delete('a');
      expect(await cache.getMany!(['a', 'never-set'])).toEqual([undefined, undefined]);
    });

    it('returns awkward values under awkward keys exactly with getMany, 500 keys in one call', async (context) => {
      if (!subject.getMany) context.skip();
      const cache = subject.createCache();
      await Promise.all(
        awkwardKeys.map((key, index) => cache.set(key, awkwardValues[index % awkwardValues.length]!, long)),
      );
      expect(await cache.getMany!(awkwardKeys)).toEqual(
        awkwardKeys.map((_key, index) => awkwardValues[index % awkwardValues.length]),
      );
      const many = Array.from({ length: 500 }, (_unused, index) => `many-${index}`);
      await Promise.all(many.filter((_key, index) => index % 3 === 0).map((key) => cache.set(key, `v:${key}`, long)));
      expect(await cache.getMany!(many)).toEqual(many.map((key, index) => (index % 3 === 0 ? `v:${key}` : undefined)));
    });

    it('keeps the namespaces of two caches apart in getMany, and expired keys read as absent', async (context) => {
      if (!subject.getMany) context.skip();
      const first = subject.createCache();
      const second = subject.createCache();
      await first.set('shared-name', 'in the first', long);
      await first.set('short', 'goes away', oneSecond);
      expect(await second.getMany!(['shared-name', 'short'])).toEqual([undefined, undefined]);
      expect(await first.getMany!(['shared-name', 'short'])).toEqual(['in the first', 'goes away']);
      await waitUntilGone(() => first.get('short'), 4_000);
      expect(await first.getMany!(['shared-name', 'short'])).toEqual(['in the first', undefined]);
    }, 15_000);
  });
}
