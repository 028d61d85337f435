/**
 * The `torii-gateway/drivers/workers-kv` entry: the key cache in a Cloudflare Workers KV namespace, as the Worker uses
 * it with a `TORII_KV` binding. Pass it as `sharedCache` to `openDatabaseAccounting` or `assembleAccounting`. KV is
 * eventually consistent and keeps an entry at least 60 s (`workersKvMinimumTtlSeconds`).
 *
 * @example
 * import { createWorkersKvKeyValueCache } from 'torii-gateway/drivers/workers-kv';
 * const sharedCache = createWorkersKvKeyValueCache(env.TORII_KV, { prefix: 'torii:kv:' });
 */
export {
  createWorkersKvKeyValueCache,
  workersKvMinimumTtlSeconds,
  type WorkersKvKeyValueCacheOptions,
  type WorkersKvNamespace,
} from '../cloudflare/workers-kv-key-value-cache.ts';
