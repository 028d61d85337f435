import type { KeyValueCache } from '../../src/cache/key-value-cache.ts';
import type { LimitStore } from '../../src/limits/limit-store.ts';
import { keepAlive } from './worker-request-scope.ts';

/**
 * A {@link KeyValueCache} whose every call is kept alive by the invocation that made it ({@link keepAlive}). The key
 * lookup fills the shared tier without waiting for it (`setIfAbsent` after a database read), so without this a KV
 * write started near the end of a response could be cancelled with the request.
 */
export function keptAliveKeyValueCache(cache: KeyValueCache): KeyValueCache {
  return {
    get: (key) => keepAlive(cache.get(key)),
    set: (key, value, options) => keepAlive(cache.set(key, value, options)),
    setIfAbsent: (key, value, options) => keepAlive(cache.setIfAbsent(key, value, options)),
    delete: (key) => keepAlive(cache.delete(key)),
    ...(cache.getMany === undefined ? {} : { getMany: (keys) => keepAlive(cache.getMany!(keys)) }),
  };
}

/**
 * A {@link LimitStore} whose every call is kept alive by the invocation that made it. The rate limiter refills leased
 * slices and gives units back in the background, after the request that caused it may have answered; this is the
 * `waitUntil` those calls need on workerd.
 */
export function keptAliveLimitStore(store: LimitStore): LimitStore {
  return {
    lease: (request) => keepAlive(store.lease(request)),
    release: (request) => keepAlive(store.release(request)),
    add: (request) => keepAlive(store.add(request)),
  };
}
