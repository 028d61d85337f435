import type { Redis } from '@upstash/redis';
import type { SharedCircuitChange } from '../../src/routing/circuit-bus.ts';
import type { CircuitStore, OpenCircuit } from '../../src/routing/polled-circuit-bus.ts';

/** The hash that holds the open circuits: field = deployment id, value = `<openUntil>|<origin>`. */
export const upstashCircuitsKey = 'torii:circuits';

/** The most circuits the hash keeps: a config has far fewer deployments; a flood of made-up ids stops here. */
const maxStoredCircuits = 10_000;

/** How long the hash outlives its latest opening, so a gateway that goes quiet leaves nothing behind. */
const keepAfterLastOpeningMs = 60_000;

/**
 * Records a change and answers every field of the hash, atomically. An opening keeps the later of its end and the one
 * stored (and renews the hash's life to cover it); a closing deletes the field; fields past their end are deleted.
 * KEYS[1] the hash; ARGV: state, deployment id, openUntil, origin, now, maximum fields.
 */
const recordScript = `
local function endOf(value)
  if not value then return nil end
  local digits = string.match(value, '^(%d+)|')
  if not digits then return nil end
  return tonumber(digits)
end
local now = tonumber(ARGV[5])
local fields = redis.call('HGETALL', KEYS[1])
for index = 1, #fields, 2 do
  local ends = endOf(fields[index + 1])
  if ends == nil or ends <= now then redis.call('HDEL', KEYS[1], fields[index]) end
end
if ARGV[1] == 'closed' then
  redis.call('HDEL', KEYS[1], ARGV[2])
else
  local openUntil = tonumber(ARGV[3])
  local currentEnd = endOf(redis.call('HGET', KEYS[1], ARGV[2]))
  if openUntil > now and (currentEnd ~= nil or redis.call('HLEN', KEYS[1]) < tonumber(ARGV[6])) then
    if currentEnd == nil or currentEnd < openUntil then
      redis.call('HSET', KEYS[1], ARGV[2], ARGV[3] .. '|' .. ARGV[4])
    end
    local life = openUntil - now + ${keepAfterLastOpeningMs}
    if redis.call('PTTL', KEYS[1]) < life then redis.call('PEXPIRE', KEYS[1], life) end
  end
end
return redis.call('HGETALL', KEYS[1])
`;

/**
 * The circuits open at `now` among a hash's fields (a flat field/value list or an object); malformed and ended
 * entries are skipped.
 */
function openCircuitsOf(fields: unknown, now: number): OpenCircuit[] {
  const entries: [unknown, unknown][] = [];
  if (Array.isArray(fields))
    for (let index = 0; index + 1 < fields.length; index += 2) entries.push([fields[index], fields[index + 1]]);
  else if (fields !== null && typeof fields === 'object') entries.push(...Object.entries(fields));
  const open: OpenCircuit[] = [];
  for (const [deploymentId, value] of entries) {
    if (typeof deploymentId !== 'string') continue;
    const text = typeof value === 'number' ? String(value) : value;
    if (typeof text !== 'string') continue;
    const separator = text.indexOf('|');
    const openUntil = Number(text.slice(0, separator));
    if (separator <= 0 || !Number.isFinite(openUntil) || openUntil <= now) continue;
    open.push({ deploymentId, openUntil, origin: text.slice(separator + 1) });
  }
  return open;
}

/**
 * A {@link CircuitStore} in Upstash Redis over its REST API (Deno, and any runtime without a Redis connection): one
 * hash, one EVAL per circuit change and one HGETALL per refresh. The hash expires a minute after the end of its
 * latest opening.
 *
 * @example
 * ```ts
 * const store = createUpstashCircuitStore({ redis: createUpstashRedisClient({ url, token }) });
 * const bus = createPolledCircuitBus(store, { logger });
 * ```
 */
export function createUpstashCircuitStore(options: {
  redis: Redis;
  key?: string;
  wallNow?: () => number;
}): CircuitStore {
  const key = options.key ?? upstashCircuitsKey;
  const wallNow = options.wallNow ?? Date.now;
  return {
    async record(change: SharedCircuitChange) {
      const openUntil = change.state === 'open' ? String(Math.round(change.openUntil)) : '0';
      const fields = await options.redis.eval(
        recordScript,
        [key],
        [change.state, change.deploymentId, openUntil, change.origin, String(wallNow()), String(maxStoredCircuits)],
      );
      return openCircuitsOf(fields, wallNow());
    },
    async openCircuits() {
      return openCircuitsOf(await options.redis.hgetall(key), wallNow());
    },
  };
}
