import type { KeyValueCache } from '../cache/key-value-cache.ts';
import { GatewayError, isGatewayError } from '../errors.ts';
import type { KeyInvalidationBus } from './key-invalidation.ts';
import type { KeyStore, NewVirtualKey, VirtualKeyChanges, VirtualKeyPage } from './key-store.ts';
import { sha256 as webCryptoSha256 } from './sha256.ts';
import { sharedKeyCacheEntry, sharedKeyCacheKey } from './virtual-key-cache-entry.ts';
import type { VirtualKeyRecord } from './virtual-key-record.ts';
import { generateVirtualKeyId, generateVirtualKeySecret, toHex } from './virtual-key-secret.ts';

/** A key together with its secret: only ever returned by create and rotate, never stored. */
export interface IssuedVirtualKey {
  record: VirtualKeyRecord;
  secret: string;
}

/** What the admin API does with keys: the store's operations plus secrets, cache updates and invalidations. */
export interface KeyAdministration {
  create(fields: NewVirtualKey): Promise<IssuedVirtualKey>;
  get(id: string): Promise<VirtualKeyRecord | undefined>;
  list(options: { limit: number; cursor?: string; owner?: string; team?: string }): Promise<VirtualKeyPage>;
  update(id: string, changes: VirtualKeyChanges): Promise<VirtualKeyRecord | undefined>;
  revoke(id: string): Promise<VirtualKeyRecord | undefined>;
  rotate(id: string): Promise<IssuedVirtualKey | undefined>;
}

/** Options of {@link createKeyAdministration}. */
export interface KeyAdministrationOptions {
  store: KeyStore;
  sharedCache?: KeyValueCache;
  invalidations?: KeyInvalidationBus;
  sha256?: (text: string) => Uint8Array | Promise<Uint8Array>;
  /** Must match the authenticator's; seconds. */
  sharedTtlSeconds?: number;
  negativeTtlSeconds?: number;
}

/** The 503 when the key store fails (the database is unreachable); a change may or may not have been saved. */
function keyStoreUnavailable(cause: unknown, changing: boolean): GatewayError {
  return new GatewayError({
    status: 503,
    type: 'api_error',
    code: 'key_store_unavailable',
    retryable: true,
    cause,
    message: changing
      ? 'The key store (the database) could not be reached, so the change may not have been saved. Check the key and try again shortly.'
      : 'The key store (the database) could not be reached. Try again shortly.',
  });
}

/**
 * Runs a store call; a failure that is not already a {@link GatewayError} (a 400 for a bad cursor is) means the store
 * could not be reached, and becomes a 503 rather than a 500.
 */
async function fromStore<Result>(changing: boolean, call: () => Promise<Result>): Promise<Result> {
  try {
    return await call();
  } catch (error) {
    throw isGatewayError(error) ? error : keyStoreUnavailable(error, changing);
  }
}

/**
 * Key administration. A change is written to the store first, then the new record replaces the shared cache's
 * entry (a rotated-away hash becomes a negative entry), then an invalidation is published so every process drops
 * its local copy. If the shared cache cannot be updated the change still stands in the store; the call then fails
 * with a 503 that says so, since other instances may serve the old record until the shared entry expires. A store
 * that cannot be reached is a 503 `key_store_unavailable`.
 *
 * @example
 * const administration = createKeyAdministration({ store, sharedCache, invalidations });
 * const { record, secret } = await administration.create({ name: 'ci', rpmLimit: 60 });
 */
export function createKeyAdministration(options: KeyAdministrationOptions): KeyAdministration {
  const { store, sharedCache, invalidations } = options;
  const digest = options.sha256 ?? webCryptoSha256;
  const sharedTtlSeconds = options.sharedTtlSeconds ?? 600;
  const negativeTtlSeconds = options.negativeTtlSeconds ?? 60;

  const hashOf = async (secret: string): Promise<string> => toHex(await digest(secret));

  const announce = async (record: VirtualKeyRecord, replacedHash?: string): Promise<void> => {
    const hashes = replacedHash === undefined ? [record.hash] : [record.hash, replacedHash];
    if (sharedCache !== undefined) {
      try {
        await sharedCache.set(sharedKeyCacheKey(record.hash), sharedKeyCacheEntry(record), {
          ttlSeconds: sharedTtlSeconds,
        });
        if (replacedHash !== undefined)
          await sharedCache.set(sharedKeyCacheKey(replacedHash), sharedKeyCacheEntry(null), {
            ttlSeconds: negativeTtlSeconds,
          });
      } catch (error) {
        // Publish anyway: processes that drop their copy re-read the store when the shared entry is gone.
        await Promise.allSettled(hashes.map((hash) => sharedCache.delete(sharedKeyCacheKey(hash))));
        await invalidations?.publish({ hashes, version: record.version }).catch(() => {});
        throw new GatewayError({
          status: 503,
          type: 'api_error',
          code: 'key_cache_unavailable',
          retryable: true,
          cause: error,
          message: `The change to key ${record.id} is saved, but the shared key cache could not be updated; other instances may use the previous version for up to ${sharedTtlSeconds} s.`,
        });
      }
    }
    await invalidations?.publish({ hashes, version: record.version });
  };

  return {
    async create(fields) {
      const { secret, prefix } = generateVirtualKeySecret();
      const hash = await hashOf(secret);
      const record = await fromStore(true, () => store.create({ ...fields, id: generateVirtualKeyId(), hash, prefix }));
      // A negative entry for this hash cannot exist (the secret is new), so nothing needs announcing.
      return { record, secret };
    },
    get: (id) => fromStore(false, () => store.findById(id)),
    list: (listOptions) => fromStore(false, () => store.list(listOptions)),
    async update(id, changes) {
      const record = await fromStore(true, () => store.update(id, changes));
      if (record !== undefined) await announce(record);
      return record;
    },
    async revoke(id) {
      const record = await fromStore(true, () => store.revoke(id));
      if (record !== undefined) await announce(record);
      return record;
    },
    async rotate(id) {
      const current = await fromStore(false, () => store.findById(id));
      if (current === undefined || current.revokedAt !== null) return undefined;
      const { secret, prefix } = generateVirtualKeySecret();
      const hash = await hashOf(secret);
      const record = await fromStore(true, () => store.rotate(id, { hash, prefix }));
      if (record === undefined) return undefined;
      await announce(record, current.hash);
      return { record, secret };
    },
  };
}
