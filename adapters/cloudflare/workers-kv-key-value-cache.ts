import type { KeyValueCache } from '../../src/cache/key-value-cache.ts';
import { assertTtlSeconds } from '../../src/cache/key-value-cache-ttl.ts';

/**
 * The part of a Workers `KVNamespace` binding this cache uses (declared here rather than depending on
 * @cloudflare/workers-types; the platform's binding satisfies it).
 */
export interface WorkersKvNamespace {
  getWithMetadata<Metadata = unknown>(
    key: string,
    type: 'text',
  ): Promise<{ value: string | null; metadata: Metadata | null }>;
  put(key: string, value: string, options?: { expirationTtl?: number; metadata?: unknown }): Promise<void>;
  delete(key: string): Promise<void>;
}

/** What {@link createWorkersKvKeyValueCache} is made with. */
export interface WorkersKvKeyValueCacheOptions {
  /** Put before every key (`torii:kv:`), so the cache can share the namespace with other data. */
  prefix: string;
  /** Wall-clock time in epoch ms, for expiry; defaults to `Date.now`. */
  now?: () => number;
}

/** KV refuses an `expirationTtl` below this many seconds. */
export const workersKvMinimumTtlSeconds = 60;

/** Stored beside each value: when it stops being valid, in epoch ms. */
interface EntryMetadata {
  expiresAt: number;
}

function expiresAtOf(metadata: unknown): number | undefined {
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const expiresAt = (metadata as Partial<EntryMetadata>).expiresAt;
  return typeof expiresAt === 'number' ? expiresAt : undefined;
}

/**
 * A {@link KeyValueCache} over a Workers KV namespace binding.
 *
 * TTL: KV refuses an `expirationTtl` under 60 seconds, so a shorter TTL is rounded up to 60 for KV's own expiry
 * (which only frees storage). The TTL asked for is still honoured exactly: every value carries its expiry time in
 * KV metadata, and a read past it answers undefined. A 5-second negative cache entry lasts 5 seconds, not 60.
 *
 * `setIfAbsent` is get-then-put, not atomic: KV has no conditional write, so two concurrent callers can both see the
 * key absent and both write (the last write wins, and both are told they stored it). For the key lookup that is
 * harmless (both write the same record read from the database); nothing that needs mutual exclusion may rely on it.
 *
 * Consistency: KV is eventually consistent across locations. A write or delete made in one location can take up
 * to about 60 seconds to be seen in others (reads are cached at the edge), so this tier is not where revocation is
 * enforced; the short local TTL bounds it on Workers (design.md §3). Expiry itself is exact everywhere, since the
 * expiry time travels with the value. Keys are limited to 512 bytes (prefix included) and values to 25 MiB.
 *
 * @example
 * ```ts
 * export default {
 *   async fetch(request: Request, env: { TORII_CACHE: WorkersKvNamespace }) {
 *     const cache = createWorkersKvKeyValueCache(env.TORII_CACHE, { prefix: 'torii:kv:' });
 *     await cache.set('key:abc', JSON.stringify(record), { ttlSeconds: 30 });
 *   },
 * };
 * ```
 */
export function createWorkersKvKeyValueCache(
  namespace: WorkersKvNamespace,
  options: WorkersKvKeyValueCacheOptions,
): KeyValueCache {
  const { prefix } = options;
  const now = options.now ?? Date.now;

  const read = async (key: string): Promise<string | undefined> => {
    const { value, metadata } = await namespace.getWithMetadata(prefix + key, 'text');
    if (value === null) return undefined;
    const expiresAt = expiresAtOf(metadata);
    if (expiresAt !== undefined && expiresAt <= now()) return undefined;
    return value;
  };

  const write = (key: string, value: string, ttlSeconds: number): Promise<void> => {
    const metadata: EntryMetadata = { expiresAt: now() + ttlSeconds * 1000 };
    return namespace.put(prefix + key, value, {
      expirationTtl: Math.max(ttlSeconds, workersKvMinimumTtlSeconds),
      metadata,
    });
  };

  return {
    get: read,
    async set(key, value, { ttlSeconds }) {
      assertTtlSeconds(ttlSeconds);
      await write(key, value, ttlSeconds);
    },
    async setIfAbsent(key, value, { ttlSeconds }) {
      assertTtlSeconds(ttlSeconds);
      if ((await read(key)) !== undefined) return false;
      await write(key, value, ttlSeconds);
      return true;
    },
    async delete(key) {
      await namespace.delete(prefix + key);
    },
  };
}
