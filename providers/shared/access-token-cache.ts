/**
 * A cache for short-lived OAuth access tokens (Microsoft Entra ID, Google service accounts): one fetch at a time per
 * credential, refreshed before expiry, never an expired token, and a short memory of failures so a broken token
 * endpoint is not called by every request.
 *
 * Semantics, in order of a `get()`:
 * - a token outside the refresh margin is returned at once;
 * - a token inside the refresh margin but not yet expired is returned at once, and ONE background refresh starts
 *   (unless one is running or a failure is being remembered); a failed background refresh keeps the old token until
 *   it expires and is remembered like any failure;
 * - with no usable token (none yet, expired, or invalidated), the caller waits for the one in-flight fetch (started
 *   if none runs): every concurrent caller shares it, and a failure rejects them all with the fetch's error;
 * - a failure is not cached as a token, but is remembered for {@link accessTokenFailureBackoffMs}: callers in that
 *   window without a usable token get the same error at once, and the next call after it fetches again.
 */

/** An access token and the moment it stops being valid. */
export interface AccessToken {
  token: string;
  /** epoch ms */
  expiresAt: number;
}

/** How an {@link AccessTokenCache} gets and times its tokens. */
export interface AccessTokenCacheOptions {
  /** Fetches a fresh token. */
  fetchToken: () => Promise<AccessToken>;
  /** Refresh this long before expiry (default 5 minutes, capped at half the token's lifetime). */
  refreshMarginMs?: number;
  /** Clock (default Date.now), for tests. */
  now?: () => number;
}

/** A cached access token for one credential identity. */
export interface AccessTokenCache {
  /** The current token, fetching or refreshing it as needed; rejects with the token fetch's error. */
  get(): Promise<string>;
  /**
   * Drops the cached token (after the upstream rejects it with 401). Given the rejected token, drops it only if it is
   * still the cached one, so a burst of 401s for an old token does not also throw away the token fetched after it.
   */
  invalidate(rejectedToken?: string): void;
}

/** Default refresh margin: five minutes before expiry. */
const defaultRefreshMarginMs = 5 * 60_000;

/**
 * How long a failed token fetch is remembered: callers without a usable token in this window get the failure at once
 * instead of calling the token endpoint again. Two seconds: long enough that a burst of requests against a broken
 * endpoint makes one call, short enough that a fixed endpoint (or credential) is picked up almost at once.
 */
export const accessTokenFailureBackoffMs = 2_000;

/** Most credential identities {@link sharedAccessTokenCache} keeps; the least recently used is dropped beyond it. */
export const sharedAccessTokenCacheLimit = 64;

/** A token being held, with the moment from which it should be refreshed. */
interface HeldToken {
  token: string;
  expiresAt: number;
  refreshAt: number;
}

/** A cache whose token source can be replaced (the shared cache hands the newest caller's `fetchToken` to its entry). */
interface ReplaceableAccessTokenCache extends AccessTokenCache {
  replaceFetchToken(fetchToken: () => Promise<AccessToken>): void;
}

function createReplaceableAccessTokenCache(options: AccessTokenCacheOptions): ReplaceableAccessTokenCache {
  const now = options.now ?? Date.now;
  const refreshMarginMs = Math.max(0, options.refreshMarginMs ?? defaultRefreshMarginMs);
  let fetchToken = options.fetchToken;
  let held: HeldToken | undefined;
  let inFlight: Promise<HeldToken> | undefined;
  let failure: { error: unknown; until: number } | undefined;

  function startFetch(): Promise<HeldToken> {
    const fetching = (async (): Promise<HeldToken> => {
      const fresh = await fetchToken();
      const receivedAt = now();
      if (typeof fresh.token !== 'string' || fresh.token.length === 0) {
        throw new Error('The token source returned an empty access token.');
      }
      if (!Number.isFinite(fresh.expiresAt) || fresh.expiresAt <= receivedAt) {
        throw new Error('The token source returned an access token that has already expired.');
      }
      const margin = Math.min(refreshMarginMs, (fresh.expiresAt - receivedAt) / 2);
      return { token: fresh.token, expiresAt: fresh.expiresAt, refreshAt: fresh.expiresAt - margin };
    })();
    inFlight = fetching;
    fetching.then(
      (token) => {
        if (inFlight === fetching) inFlight = undefined;
        failure = undefined;
        held = token;
      },
      (error: unknown) => {
        if (inFlight === fetching) inFlight = undefined;
        failure = { error, until: now() + accessTokenFailureBackoffMs };
      },
    );
    return fetching;
  }

  async function get(): Promise<string> {
    const time = now();
    if (held !== undefined && time < held.expiresAt) {
      if (time >= held.refreshAt && inFlight === undefined && !(failure !== undefined && time < failure.until)) {
        // Background refresh: its failure is remembered by startFetch's handler; nobody awaits this promise.
        startFetch().catch(() => undefined);
      }
      return held.token;
    }
    held = undefined;
    if (inFlight !== undefined) return (await inFlight).token;
    if (failure !== undefined && time < failure.until) throw failure.error;
    return (await startFetch()).token;
  }

  return {
    get,
    invalidate(rejectedToken) {
      // A fetch already running started after the held token was fetched, so it brings a newer token: it is kept.
      if (rejectedToken === undefined || held?.token === rejectedToken) held = undefined;
    },
    replaceFetchToken(next) {
      fetchToken = next;
    },
  };
}

/**
 * A token cache for one credential identity: single-flight fetches, refresh before expiry, a short failure backoff
 * (see the module comment).
 *
 * @example
 * const cache = createAccessTokenCache({
 *   fetchToken: async () => ({ token: 'eyJ...', expiresAt: Date.now() + 3_600_000 }),
 * });
 * const headers = { authorization: `Bearer ${await cache.get()}` };
 * // after the upstream answers 401 to that token:
 * cache.invalidate();
 */
export function createAccessTokenCache(options: AccessTokenCacheOptions): AccessTokenCache {
  const cache = createReplaceableAccessTokenCache(options);
  return { get: cache.get, invalidate: cache.invalidate };
}

const sharedCaches = new Map<string, ReplaceableAccessTokenCache>();

/**
 * One cache per credential identity (module-level, per isolate/process), so every request with the same credentials
 * shares it. The first call for a key makes the cache with its options (clock, margin); later calls reuse it but hand
 * it their `fetchToken`, so a rotated secret behind the same key is used from the next fetch on. At most
 * {@link sharedAccessTokenCacheLimit} keys are kept (least recently used dropped), since keys come from config. The key
 * should name the identity (tenant, client, scope, authority), never hold a secret itself.
 *
 * @example
 * const cache = sharedAccessTokenCache(`entra|${tenantId}|${clientId}|${scope}`, {
 *   fetchToken: () => fetchClientCredentialsToken(tenantId, clientId, clientSecret),
 * });
 * const token = await cache.get();
 */
export function sharedAccessTokenCache(key: string, options: AccessTokenCacheOptions): AccessTokenCache {
  let cache = sharedCaches.get(key);
  if (cache === undefined) {
    cache = createReplaceableAccessTokenCache(options);
  } else {
    cache.replaceFetchToken(options.fetchToken);
    sharedCaches.delete(key);
  }
  sharedCaches.set(key, cache);
  while (sharedCaches.size > sharedAccessTokenCacheLimit) {
    const oldest = sharedCaches.keys().next().value;
    if (oldest === undefined) break;
    sharedCaches.delete(oldest);
  }
  return { get: cache.get, invalidate: cache.invalidate };
}

/**
 * Drops `rejectedToken` from the shared cache of `key` (if there is one and it still holds that token): for a
 * translator's `onCredentialsRejected`, after the upstream answered 401 to a request carrying it.
 *
 * @example
 * invalidateSharedAccessToken(`entra|${tenantId}|${clientId}|${scope}`, bearerTokenOf(request));
 */
export function invalidateSharedAccessToken(key: string, rejectedToken: string): void {
  sharedCaches.get(key)?.invalidate(rejectedToken);
}

/** The token of a request's `Authorization: Bearer <token>` header, if it has one. */
export function bearerTokenOf(headers: Readonly<Record<string, string>>): string | undefined {
  for (const [name, value] of Object.entries(headers))
    if (name.toLowerCase() === 'authorization' && /^Bearer /i.test(value)) return value.slice('Bearer '.length);
  return undefined;
}
