import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../tests/support/seeded-random.ts';
import { LruMap } from './lru-map.ts';

function clock() {
  let time = 1_000;
  return { now: () => time, advance: (ms: number) => (time += ms) };
}

/** The obvious implementation (Map insertion order as recency), to compare against. */
class ReferenceLru {
  readonly entries = new Map<string, { value: number; expiresAt: number }>();
  constructor(
    readonly maxEntries: number,
    readonly now: () => number,
  ) {}
  get(key: string): number | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }
  set(key: string, value: number, ttlMs: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
  }
  delete(key: string): boolean {
    return this.entries.delete(key);
  }
}

describe('LruMap', () => {
  it('stores, replaces and deletes values', () => {
    const map = new LruMap<string>({ maxEntries: 10 });
    expect(map.get('a')).toBeUndefined();
    map.set('a', 'one', 60_000);
    expect(map.get('a')).toBe('one');
    map.set('a', 'two', 60_000);
    expect(map.get('a')).toBe('two');
    expect(map.size).toBe(1);
    expect(map.delete('a')).toBe(true);
    expect(map.delete('a')).toBe(false);
    expect(map.get('a')).toBeUndefined();
    expect(map.size).toBe(0);
  });

  it('evicts the least recently used entry when full, a read counting as a use', () => {
    const map = new LruMap<number>({ maxEntries: 3 });
    map.set('a', 1, Infinity);
    map.set('b', 2, Infinity);
    map.set('c', 3, Infinity);
    expect(map.get('a')).toBe(1); // a is now the most recently used; b the least
    map.set('d', 4, Infinity);
    expect(map.get('b')).toBeUndefined();
    expect([map.get('a'), map.get('c'), map.get('d')]).toEqual([1, 3, 4]);
    map.set('c', 30, Infinity); // an overwrite is a use too: a is now the least recently used
    map.set('e', 5, Infinity);
    expect(map.get('a')).toBeUndefined();
    expect(map.size).toBe(3);
  });

  it('expires an entry when its TTL has passed, on the injected clock', () => {
    const time = clock();
    const map = new LruMap<string>({ maxEntries: 10, now: time.now });
    map.set('a', 'value', 1_000);
    time.advance(999);
    expect(map.get('a')).toBe('value');
    time.advance(1);
    expect(map.get('a')).toBeUndefined();
    expect(map.size).toBe(0);
    map.set('a', 'again', 1_000);
    expect(map.get('a')).toBe('again');
  });

  it('gives an overwritten entry the new TTL', () => {
    const time = clock();
    const map = new LruMap<string>({ maxEntries: 10, now: time.now });
    map.set('a', 'short', 100);
    map.set('a', 'long', 10_000);
    time.advance(5_000);
    expect(map.get('a')).toBe('long');
  });

  it('grows past its first allocation up to the cap and reuses freed slots', () => {
    const map = new LruMap<number>({ maxEntries: 5_000 });
    for (let index = 0; index < 5_000; index++) map.set(`k${index}`, index, Infinity);
    expect(map.size).toBe(5_000);
    for (let index = 0; index < 5_000; index += 7) expect(map.get(`k${index}`)).toBe(index);
    for (let index = 0; index < 2_000; index++) map.delete(`k${index}`);
    for (let index = 5_000; index < 7_000; index++) map.set(`k${index}`, index, Infinity);
    expect(map.size).toBe(5_000);
    expect(map.get('k6999')).toBe(6999);
    expect(map.get('k2000')).toBe(2000);
  });

  it('clears everything and keeps working afterwards', () => {
    const map = new LruMap<number>({ maxEntries: 2 });
    map.set('a', 1, Infinity);
    map.set('b', 2, Infinity);
    map.clear();
    expect(map.size).toBe(0);
    expect(map.get('a')).toBeUndefined();
    map.set('c', 3, Infinity);
    map.set('d', 4, Infinity);
    map.set('e', 5, Infinity);
    expect([map.get('c'), map.get('d'), map.get('e')]).toEqual([undefined, 4, 5]);
  });

  it('refuses a cap below 1 and a TTL that is not positive', () => {
    expect(() => new LruMap({ maxEntries: 0 })).toThrow(RangeError);
    expect(() => new LruMap({ maxEntries: 1.5 })).toThrow(RangeError);
    const map = new LruMap<string>({ maxEntries: 1 });
    expect(() => map.set('a', 'v', 0)).toThrow(RangeError);
    expect(() => map.set('a', 'v', Number.NaN)).toThrow(RangeError);
    expect(map.size).toBe(0);
  });

  // Compared with plain `!==` and one expect at the end: 600,000 expect() calls took 5.5 s on a busy machine. The
  // seeded mulberry32 replaces a linear congruential generator whose products overflowed double precision: it only
  // ever drew 101 of the 600 keys and almost never an odd operation (deletes and half of the sets).
  it('behaves like a plain Map-ordered LRU over 200,000 random operations', { timeout: 60_000 }, () => {
    const next = seededRandom(42);
    const random = (limit: number) => Math.floor(next() * limit);
    const time = clock();
    const map = new LruMap<number>({ maxEntries: 300, now: time.now });
    const reference = new ReferenceLru(300, time.now);
    const keys = new Set<string>();
    const operations = [0, 0, 0];
    let mismatch: string | undefined;
    for (let step = 0; step < 200_000 && mismatch === undefined; step++) {
      const key = `key-${random(600)}`;
      keys.add(key);
      const operation = random(10);
      if (operation < 5) {
        operations[0]!++;
        const [actual, expected] = [map.get(key), reference.get(key)];
        if (actual !== expected) mismatch = `step ${step}: get(${key}) gave ${actual}, expected ${expected}`;
      } else if (operation < 9) {
        operations[1]!++;
        const ttl = 1 + random(5_000);
        map.set(key, step, ttl);
        reference.set(key, step, ttl);
      } else {
        operations[2]!++;
        const [actual, expected] = [map.delete(key), reference.delete(key)];
        if (actual !== expected) mismatch = `step ${step}: delete(${key}) gave ${actual}, expected ${expected}`;
      }
      time.advance(random(3));
      if (mismatch === undefined && map.size !== reference.entries.size)
        mismatch = `step ${step}: size ${map.size}, expected ${reference.entries.size}`;
    }
    expect(mismatch).toBeUndefined();
    // The run really covers the key space and every operation.
    expect(keys.size).toBe(600);
    expect(Math.min(...operations)).toBeGreaterThan(15_000);
  });
});
