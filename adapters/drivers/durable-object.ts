/**
 * The `torii-gateway/drivers/durable-object` entry: strictly shared state on Cloudflare Durable Objects, as the Worker
 * uses it. `ToriiKeyCounters` holds rate-limit windows and budget spend per key (`createDurableObjectLimitStore`,
 * `createDurableObjectSpendCounters`); `ToriiCircuits` holds open circuits for every isolate
 * (`createDurableObjectCircuitStore`, read by `createPolledCircuitBus`). Export the classes from your Worker and bind
 * them in wrangler.toml.
 *
 * @example
 * // wrangler.toml: [[durable_objects.bindings]] name = "TORII_KEY_COUNTERS", class_name = "ToriiKeyCounters"
 * export { ToriiCircuits, ToriiKeyCounters } from 'torii-gateway/drivers/durable-object';
 * import { createDurableObjectLimitStore } from 'torii-gateway/drivers/durable-object';
 * const limitStore = createDurableObjectLimitStore(env.TORII_KEY_COUNTERS);
 */
export { ToriiCircuits } from '../cloudflare/circuits-durable-object.ts';
export { ToriiKeyCounters } from '../cloudflare/key-counters-durable-object.ts';
export {
  createDurableObjectLimitStore,
  type KeyCountersNamespace,
  type KeyCountersOptions,
} from '../cloudflare/durable-object-limit-store.ts';
export { createDurableObjectSpendCounters } from '../cloudflare/durable-object-spend-counters.ts';
export { createDurableObjectCircuitStore, type CircuitsNamespace } from '../cloudflare/durable-object-circuit-store.ts';
