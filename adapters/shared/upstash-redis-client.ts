import { Redis } from '@upstash/redis';

/** Where an Upstash Redis database is, and how long one call may take. */
export interface UpstashConnectionOptions {
  /** The database's REST URL (`UPSTASH_REDIS_REST_URL`). */
  url: string;
  /** The database's REST token (`UPSTASH_REDIS_REST_TOKEN`). */
  token: string;
  /** How long one HTTP call may take before it is aborted and the call rejects, in ms. Default 2000. */
  timeoutMs?: number;
  /** How many times a call that failed at the network level is tried again (50 ms apart). Default 1. */
  retries?: number;
}

/**
 * An `@upstash/redis` client (Redis over HTTPS, for runtimes without TCP sockets: Workers, Deno Deploy, and Node or
 * Deno too) set up for the gateway's request path. Three of the client's defaults are wrong there:
 *
 * - `automaticDeserialization` would `JSON.parse` every value read: `"123"` would come back as the number 123 and
 *   `'{"a": 1}'` as an object. It is turned off, so values come back exactly as stored (integers stay numbers).
 * - Retries: by default five, backing off up to ~4 s in total. Here one retry 50 ms later.
 * - No timeout: a call waits as long as fetch does. Here each HTTP call is aborted after `timeoutMs`.
 *
 * Responses come base64-encoded (the client's default `Upstash-Encoding: base64`), so any byte sequence survives
 * JSON; commands issued in the same tick are batched into one `/pipeline` call (auto-pipelining, on by default), so
 * the key cache and the limit store sharing one client share HTTP calls too.
 *
 * @example
 * ```ts
 * const redis = createUpstashRedisClient({ url: env.UPSTASH_REDIS_REST_URL, token: env.UPSTASH_REDIS_REST_TOKEN });
 * const cache = createUpstashKeyValueCache({ redis, prefix: 'torii:kv:' });
 * const limits = createUpstashLimitStore({ redis });
 * ```
 */
export function createUpstashRedisClient(options: UpstashConnectionOptions): Redis {
  const timeoutMs = options.timeoutMs ?? 2_000;
  return new Redis({
    url: options.url,
    token: options.token,
    automaticDeserialization: false,
    enableTelemetry: false,
    retry: { retries: options.retries ?? 1, backoff: () => 50 },
    // A function, so each call gets a fresh timeout, and an abort rejects the call (a plain signal that has fired
    // makes the client resolve with the abort reason as if it were the result).
    signal: () => AbortSignal.timeout(timeoutMs),
  });
}
