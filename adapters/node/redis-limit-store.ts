import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { LimitLease, LimitStore } from '../../src/limits/limit-store.ts';

/** What {@link createRedisLimitStore} needs. */
export interface RedisLimitStoreOptions {
  /** A connected ioredis client (a `Cluster` works too: every script touches one key). Not closed by the store. */
  redis: Pick<Redis, 'evalsha' | 'eval'>;
  /** Prefix of every key the store writes. Defaults to `torii:limit:`. */
  keyPrefix?: string;
}

/**
 * Lease: grants min(amount, limit - used) when at least `minimum` remain, atomically. A key gets its expiry when
 * the script creates it: two window lengths, so it outlives its window even when it was created by a process whose
 * clock runs up to a window ahead, and is gone (not swept) after that.
 *
 * KEYS[1] counter key; ARGV: amount, limit, minimum, ttl ms. Answers {granted, used}.
 */
const leaseScript = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local amount = tonumber(ARGV[1])
local remaining = tonumber(ARGV[2]) - used
if amount <= 0 or remaining < tonumber(ARGV[3]) then return {0, used} end
local granted = math.min(amount, remaining)
used = redis.call('INCRBY', KEYS[1], granted)
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return {granted, used}
`;

/** Release: subtracts, never below zero, keeping the expiry; a forgotten window stays forgotten. ARGV: amount. */
const releaseScript = `
local used = redis.call('GET', KEYS[1])
if not used then return 0 end
local after = math.max(0, tonumber(used) - tonumber(ARGV[1]))
redis.call('SET', KEYS[1], after, 'KEEPTTL')
return after
`;

/** Add: adds without checking the limit, setting the expiry on a new key. ARGV: amount, ttl ms. */
const addScript = `
local used = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return used
`;

/** A Lua script run by EVALSHA, falling back to EVAL (which also loads it) when the server does not know it yet. */
function redisScript(source: string) {
  const sha = createHash('sha1').update(source).digest('hex');
  return async (redis: RedisLimitStoreOptions['redis'], key: string, ...args: number[]): Promise<unknown> => {
    try {
      return await redis.evalsha(sha, 1, key, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(source, 1, key, ...args);
    }
  };
}

const runLease = redisScript(leaseScript);
const runRelease = redisScript(releaseScript);
const runAdd = redisScript(addScript);

/**
 * A {@link LimitStore} over Redis (ioredis): each operation is one atomic Lua script on one key,
 * `<prefix><counter>:<windowStart>:<windowMs>`, which expires two window lengths after it was created.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * const store = createRedisLimitStore({ redis: new Redis(process.env.REDIS_URL!) });
 * const limiter = createRateLimiter({ mode: 'leased', store });
 * ```
 */
export function createRedisLimitStore(options: RedisLimitStoreOptions): LimitStore {
  const { redis } = options;
  const keyPrefix = options.keyPrefix ?? 'torii:limit:';
  const keyOf = (counter: string, windowStart: number, windowMs: number): string =>
    `${keyPrefix}${counter}:${windowStart}:${windowMs}`;

  return {
    async lease({ counter, windowStart, windowMs, amount, limit, minimum = 1 }): Promise<LimitLease> {
      const reply = await runLease(
        redis,
        keyOf(counter, windowStart, windowMs),
        Math.max(0, Math.floor(amount)),
        Math.floor(limit),
        Math.max(1, Math.ceil(minimum)),
        2 * windowMs,
      );
      const [granted, used] = reply as [number, number];
      return { granted: Number(granted), used: Number(used) };
    },
    async release({ counter, windowStart, windowMs, amount }): Promise<void> {
      if (amount <= 0) return;
      await runRelease(redis, keyOf(counter, windowStart, windowMs), Math.floor(amount));
    },
    async add({ counter, windowStart, windowMs, amount }): Promise<void> {
      if (amount <= 0) return;
      await runAdd(redis, keyOf(counter, windowStart, windowMs), Math.ceil(amount), 2 * windowMs);
    },
  };
}
