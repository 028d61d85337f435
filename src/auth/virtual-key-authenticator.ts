import type { KeyValueCache } from '../cache/key-value-cache.ts';
import { LruMap } from '../cache/lru-map.ts';
import { GatewayError, isGatewayError } from '../errors.ts';
import type { AuthContext, Authenticator } from './authenticator.ts';
import type { KeyInvalidation, KeyInvalidationBus } from './key-invalidation.ts';
import type { KeyStore } from './key-store.ts';
import {
  createKeyStoreLookupBatcher,
  type KeyStoreLookupLimits,
  type KeyStoreLookupStats,
} from './key-store-lookup-batcher.ts';
import { checkMasterKey, invalidKeyError, isMasterKey } from './master-key-authenticator.ts';
import { sha256 as webCryptoSha256 } from './sha256.ts';
import { sharedKeyCacheEntry, parseSharedKeyCacheEntry, sharedKeyCacheKey } from './virtual-key-cache-entry.ts';
import type { VirtualKeyRecord } from './virtual-key-record.ts';
import { isWellFormedVirtualKeySecret, toHex } from './virtual-key-secret.ts';

/** Options of {@link createVirtualKeyAuthenticator}. */
export interface VirtualKeyAuthenticatorOptions {
  masterKey: string;
  /** The source of truth; only reached on a miss of both caches. */
  store: KeyStore;
  /** The shared tier (Redis, Workers KV, Upstash); without it a miss of the local tier goes to the store. */
  sharedCache?: KeyValueCache;
  /** Where key changes are announced; without one, the local TTL alone bounds staleness. */
  invalidations?: KeyInvalidationBus;
  /** SHA-256 of a string's UTF-8 bytes; defaults to Web Crypto. Node passes its synchronous hash. */
  sha256?: (text: string) => Uint8Array | Promise<Uint8Array>;
  /**
   * SHA-256 of a string's UTF-8 bytes as lowercase hex, synchronously, when the runtime has it natively (Node's
   * `hash('sha256', text, 'hex')`): used instead of `sha256` on the request path, where it costs a fifth of hashing
   * to bytes and hex-encoding them in JavaScript.
   */
  sha256Hex?: (text: string) => string;
  /** Longer secrets are refused with the usual 401 before they are hashed. Default 1024 characters. */
  maxSecretLength?: number;
  /**
   * How much store work keys missing from both caches may cause (forged keys among them: anyone can mint
   * well-formed ones): queries in flight, hashes per batch, hashes waiting. See {@link createKeyStoreLookupBatcher}.
   */
  storeLookup?: KeyStoreLookupLimits;
  /** Size cap of the in-process tier, for known keys and, apart, for unknown ones. Default 50,000 each. */
  localMaxEntries?: number;
  /**
   * How long the in-process tier trusts an entry, ms: the staleness bound when an invalidation message is lost
   * (and, without a bus, the propagation bound). Default 30 s.
   */
  localTtlMs?: number;
  /** How long the shared tier keeps a key record, seconds. Default 600. */
  sharedTtlSeconds?: number;
  /** How long both tiers remember that a hash is unknown, seconds. Default 60. */
  negativeTtlSeconds?: number;
  /** Wall clock (epoch ms) for expiry; defaults to Date.now. */
  now?: () => number;
  /** Monotonic clock (ms) of the in-process tier; defaults to performance.now. */
  monotonicNow?: () => number;
  /** Where lookup problems are reported (a shared cache that is down is not fatal). */
  onLookupProblem?: (problem: string, error: unknown) => void;
}

/** The tiers a lookup may be answered from, for tests and metrics. */
export type KeyLookupTier = 'local' | 'shared' | 'store';

/** The authenticator with the hooks the admin path and tests need. */
export interface VirtualKeyAuthenticator extends Authenticator {
  /** Drops local entries older than the invalidation (called by the bus subscription; public for tests). */
  invalidate(invalidation: KeyInvalidation): void;
  /** Drops every local entry (the invalidation bus may have missed messages, e.g. while Redis was unreachable). */
  forgetAll(): void;
  /** Counts of lookups answered by each tier since start. */
  lookups(): Record<KeyLookupTier, number>;
  /** Counts of the queries that keys missing from both caches caused, and of lookups refused as busy. */
  storeLookups(): KeyStoreLookupStats;
  /** Stops listening to the invalidation bus. */
  close(): void;
}

interface LocalEntry {
  /** null: the hash is known not to exist. */
  record: VirtualKeyRecord | null;
  context: AuthContext | undefined;
}

const masterContext: AuthContext = { subject: 'master', kind: 'master', allowedModelGroups: 'all' };

function lookupUnavailable(cause: unknown): GatewayError {
  return new GatewayError({
    status: 503,
    type: 'api_error',
    code: 'key_lookup_unavailable',
    retryable: true,
    cause,
    message: 'The gateway could not check this API key right now (its key store is unreachable). Try again shortly.',
  });
}

function refused(message: string, code: string): GatewayError {
  return new GatewayError({ status: 401, type: 'invalid_request_error', code, message });
}

/** The caller a valid record stands for, or the 401 that refuses it. */
function contextFor(entry: LocalEntry, secret: string, wallClock: number): AuthContext {
  const record = entry.record;
  if (record === null) throw invalidKeyError(secret);
  if (record.revokedAt !== null) throw refused('This API key has been revoked.', 'api_key_revoked');
  if (record.disabled) throw refused('This API key is disabled.', 'api_key_disabled');
  if (record.expiresAt !== null && record.expiresAt <= wallClock)
    throw refused('This API key has expired.', 'api_key_expired');
  entry.context ??= {
    subject: record.id,
    kind: 'virtual-key',
    allowedModelGroups: record.allowedModelGroups === null ? 'all' : new Set(record.allowedModelGroups),
    key: record,
  };
  return entry.context;
}

/**
 * Authenticates the master key and virtual keys with a tiered lookup: the secret's SHA-256 is looked up in an
 * in-process LRU (synchronous: the warm path has no await and no I/O), then in the shared cache, then in the key
 * store. Secrets without the `sk-torii-` shape and checksum are refused without any lookup, and unknown hashes are
 * cached as negative entries in both tiers (locally in an LRU of their own, so they never evict known keys).
 * Concurrent misses of one hash share one lookup. The checksum is public, so anyone can mint well-formed keys: what
 * reaches the store goes through a {@link createKeyStoreLookupBatcher} that bounds the queries (in flight, batched,
 * a bounded queue, then 503 `key_lookup_busy`); keys in either cache never wait for it.
 *
 * Freshness: an administrator's change writes the new record to the shared cache and publishes an invalidation;
 * every process drops its local entry at once. A local entry is trusted for `localTtlMs` at most, which bounds
 * staleness when a message is lost. A lookup that started before an invalidation and finishes after it cannot put
 * the old record back: records older than the last invalidated version of their hash are not cached, and the
 * shared tier is filled with set-if-absent only, so it never overwrites what the admin path wrote.
 *
 * @example
 * const authenticator = createVirtualKeyAuthenticator({ masterKey, store, sharedCache, invalidations });
 * const caller = await authenticator.authenticate('sk-torii-...');
 */
export function createVirtualKeyAuthenticator(options: VirtualKeyAuthenticatorOptions): VirtualKeyAuthenticator {
  const maxSecretLength = checkMasterKey(options.masterKey, options.maxSecretLength);
  const digest = options.sha256 ?? webCryptoSha256;
  const hexDigest = options.sha256Hex;
  const wallClock = options.now ?? Date.now;
  const localTtlMs = options.localTtlMs ?? 30_000;
  const sharedTtlSeconds = options.sharedTtlSeconds ?? 600;
  const negativeTtlSeconds = options.negativeTtlSeconds ?? 60;
  const lruOptions = {
    maxEntries: options.localMaxEntries ?? 50_000,
    ...(options.monotonicNow ? { now: options.monotonicNow } : {}),
  };
  const local = new LruMap<LocalEntry>(lruOptions);
  /** Hashes known not to exist, apart from `local`: a flood of unknown keys can never evict a valid key's entry. */
  const unknown = new LruMap<LocalEntry>(lruOptions);
  /** The last version an invalidation announced per hash, remembered as long as a stale read could be in flight. */
  const invalidatedVersions = new LruMap<number>(lruOptions);
  /**
   * The hash of each presented secret that authenticated a known key in the last `localTtlMs`, so a warm request
   * skips the SHA-256 (4-9 us). Only secrets of known keys go in, so a flood of made-up keys cannot grow it, and a
   * secret leaves it with its entry's lifetime: no raw secret stays in memory longer than the local tier keeps its key.
   */
  const hashBySecret = new LruMap<string>(lruOptions);
  const pending = new Map<string, Promise<LocalEntry>>();
  const counts: Record<KeyLookupTier, number> = { local: 0, shared: 0, store: 0 };
  const report = options.onLookupProblem ?? (() => {});
  const { store, sharedCache } = options;
  const storeLookups = createKeyStoreLookupBatcher(store, {
    ...options.storeLookup,
    ...(options.monotonicNow ? { monotonicNow: options.monotonicNow } : {}),
    onRefusals: (refused, { maxQueued }) =>
      report(
        `key lookups refused: ${maxQueued} unknown keys already wait for the key store`,
        `${refused} refused with 503 key_lookup_busy since the last report`,
      ),
  });
  const { masterKey } = options;

  const remember = (hash: string, entry: LocalEntry): void => {
    const floor = invalidatedVersions.get(hash);
    if (entry.record === null) unknown.set(hash, entry, negativeTtlSeconds * 1000);
    else if (floor === undefined || entry.record.version >= floor) local.set(hash, entry, localTtlMs);
  };

  const readStore = async (hash: string): Promise<LocalEntry> => {
    let record: VirtualKeyRecord | undefined;
    try {
      record = await storeLookups.find(hash);
    } catch (error) {
      // A full queue is answered as such (503 key_lookup_busy); anything else means the store is out of reach.
      throw isGatewayError(error) ? error : lookupUnavailable(error);
    }
    counts.store++;
    if (sharedCache !== undefined) {
      const value = sharedKeyCacheEntry(record ?? null);
      const ttlSeconds = record === undefined ? negativeTtlSeconds : sharedTtlSeconds;
      sharedCache
        .setIfAbsent(sharedKeyCacheKey(hash), value, { ttlSeconds })
        .catch((error: unknown) => report('shared key cache write failed', error));
    }
    return { record: record ?? null, context: undefined };
  };

  const lookUp = async (hash: string): Promise<LocalEntry> => {
    if (sharedCache !== undefined) {
      let cached: string | undefined;
      try {
        cached = await sharedCache.get(sharedKeyCacheKey(hash));
      } catch (error) {
        report('shared key cache read failed', error);
      }
      const parsed = cached === undefined ? undefined : parseSharedKeyCacheEntry(cached);
      const floor = invalidatedVersions.get(hash);
      if (parsed !== undefined && (parsed === null || floor === undefined || parsed.version >= floor)) {
        counts.shared++;
        return { record: parsed, context: undefined };
      }
    }
    return readStore(hash);
  };

  const resolve = (hash: string, secret: string): Promise<AuthContext> => {
    let lookup = pending.get(hash);
    if (lookup === undefined) {
      lookup = lookUp(hash).then(
        (entry) => {
          pending.delete(hash);
          remember(hash, entry);
          return entry;
        },
        (error: unknown) => {
          pending.delete(hash);
          throw error;
        },
      );
      pending.set(hash, lookup);
    }
    return lookup.then((entry) => contextFor(entry, secret, wallClock()));
  };

  const authenticateHash = (hash: string, secret: string, remembered = false) => {
    // Only known keys are in the local tier, so a hit needs no shape check; a miss does before any lookup.
    const known = local.get(hash);
    if (known !== undefined) {
      counts.local++;
      if (!remembered) hashBySecret.set(secret, hash, localTtlMs);
      return contextFor(known, secret, wallClock());
    }
    const entry = unknown.get(hash);
    if (entry !== undefined) {
      counts.local++;
      return contextFor(entry, secret, wallClock());
    }
    if (!isWellFormedVirtualKeySecret(secret)) throw invalidKeyError(secret);
    return resolve(hash, secret);
  };

  const unsubscribe = options.invalidations?.subscribe((invalidation) => authenticator.invalidate(invalidation));

  const authenticator: VirtualKeyAuthenticator = {
    authenticate(secret) {
      if (secret === undefined || secret.length === 0) throw invalidKeyError(undefined);
      if (secret.length > maxSecretLength) throw invalidKeyError(secret);
      // The master key is compared as it is (constant time, no hash); only other secrets are hashed for the lookup.
      if (isMasterKey(secret, masterKey)) return masterContext;
      const memo = hashBySecret.get(secret);
      if (memo !== undefined) return authenticateHash(memo, secret, true);
      if (hexDigest !== undefined) return authenticateHash(hexDigest(secret), secret);
      const presented = digest(secret);
      if (!(presented instanceof Promise)) return authenticateHash(toHex(presented), secret);
      return presented.then((presentedBytes) => authenticateHash(toHex(presentedBytes), secret));
    },
    invalidate(invalidation) {
      for (const hash of invalidation.hashes) {
        const known = invalidatedVersions.get(hash);
        if (known === undefined || known < invalidation.version)
          invalidatedVersions.set(hash, invalidation.version, localTtlMs * 2);
        unknown.delete(hash);
        const entry = local.get(hash);
        if (entry !== undefined && entry.record !== null && entry.record.version < invalidation.version)
          local.delete(hash);
      }
    },
    forgetAll() {
      local.clear();
      unknown.clear();
      hashBySecret.clear();
    },
    lookups: () => ({ ...counts }),
    storeLookups: () => storeLookups.stats(),
    close() {
      unsubscribe?.();
    },
  };
  return authenticator;
}
