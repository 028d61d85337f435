import type { LimitLease, LimitStore } from '../../src/limits/limit-store.ts';

/** A Lua script of the Redis limit store: its source, and its SHA-1 (what EVALSHA names it by), computed once. */
export interface RedisLimitScript {
  readonly source: string;
  sha1(): Promise<string>;
}

function redisLimitScript(source: string): RedisLimitScript {
  let digest: Promise<string> | undefined;
  return {
    source,
    sha1() {
      digest ??= crypto.subtle
        .digest('SHA-1', new TextEncoder().encode(source))
        .then((bytes) => [...new Uint8Array(bytes)].map((byte) => byte.toString(16).padStart(2, '0')).join(''));
      return digest;
    },
  };
}

/**
 * Lease: grants min(amount, limit - used) when at least `minimum` remain, atomically. A key gets its expiry when
 * the script creates it: two window lengths, so it outlives its window even when it was created by a process whose
 * clock runs up to a window ahead, and is gone (not swept) after that.
 *
 * KEYS[1] counter key; ARGV: amount, limit, minimum, ttl ms. Answers {granted, used}.
 */
export const leaseLimitScript = redisLimitScript(`
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local amount = tonumber(ARGV[1])
local remaining = tonumber(ARGV[2]) - used
if amount <= 0 or remaining < tonumber(ARGV[3]) then return {0, used} end
local granted = math.min(amount, remaining)
used = redis.call('INCRBY', KEYS[1], granted)
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return {granted, used}
`);

/** Release: subtracts, never below zero, keeping the expiry; a forgotten window stays forgotten. ARGV: amount. */
export const releaseLimitScript = redisLimitScript(`
local used = redis.call('GET', KEYS[1])
if not used then return 0 end
local after = math.max(0, tonumber(used) - tonumber(ARGV[1]))
redis.call('SET', KEYS[1], after, 'KEEPTTL')
return after
`);

/** Add: adds without checking the limit, setting the expiry on a new key. ARGV: amount, ttl ms. */
export const addLimitScript = redisLimitScript(`
local used = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return used
`);

/**
 * How a Redis client runs one script on one key: by EVALSHA, and by EVAL (which also loads it) when the server
 * answered NOSCRIPT. ioredis over TCP on Node, `@upstash/redis` over REST anywhere.
 */
export interface RedisScriptRunner {
  evalsha(sha1: string, key: string, args: number[]): Promise<unknown>;
  eval(source: string, key: string, args: number[]): Promise<unknown>;
}

async function runScript(
  runner: RedisScriptRunner,
  script: RedisLimitScript,
  key: string,
  args: number[],
): Promise<unknown> {
  try {
    return await runner.evalsha(await script.sha1(), key, args);
  } catch (error) {
    // ioredis: "NOSCRIPT No matching script..."; @upstash/redis: "Command failed: NOSCRIPT ...".
    if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
    return runner.eval(script.source, key, args);
  }
}

/**
 * A {@link LimitStore} over any Redis that runs Lua: each operation is one atomic script on one key,
 * `<prefix><counter>:<windowStart>:<windowMs>`, which expires two window lengths after it was created. The ioredis
 * store (adapters/node/redis-limit-store.ts) and the Upstash one (upstash-limit-store.ts) are this with their client.
 *
 * @example
 * ```ts
 * const store = createScriptedLimitStore({
 *   keyPrefix: 'torii:limit:',
 *   runner: {
 *     evalsha: (sha1, key, args) => redis.evalsha(sha1, 1, key, ...args),
 *     eval: (source, key, args) => redis.eval(source, 1, key, ...args),
 *   },
 * });
 * ```
 */
export function createScriptedLimitStore(options: { runner: RedisScriptRunner; keyPrefix: string }): LimitStore {
  const { runner, keyPrefix } = options;
  const keyOf = (counter: string, windowStart: number, windowMs: number): string =>
    `${keyPrefix}${counter}:${windowStart}:${windowMs}`;

  return {
    async lease({ counter, windowStart, windowMs, amount, limit, minimum = 1 }): Promise<LimitLease> {
      const reply = await runScript(runner, leaseLimitScript, keyOf(counter, windowStart, windowMs), [
        Math.max(0, Math.floor(amount)),
        Math.floor(limit),
        Math.max(1, Math.ceil(minimum)),
        2 * windowMs,
      ]);
      const [granted, used] = reply as [number, number];
      return { granted: Number(granted), used: Number(used) };
    },
    async release({ counter, windowStart, windowMs, amount }): Promise<void> {
      if (amount <= 0) return;
      await runScript(runner, releaseLimitScript, keyOf(counter, windowStart, windowMs), [Math.floor(amount)]);
    },
    async add({ counter, windowStart, windowMs, amount }): Promise<void> {
      if (amount <= 0) return;
      await runScript(runner, addLimitScript, keyOf(counter, windowStart, windowMs), [Math.ceil(amount), 2 * windowMs]);
    },
  };
}
