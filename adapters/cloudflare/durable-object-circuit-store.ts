import type { SharedCircuitChange } from '../../src/routing/circuit-bus.ts';
import type { CircuitStore, OpenCircuit } from '../../src/routing/polled-circuit-bus.ts';

/**
 * What the `ToriiCircuits` Durable Object answers over RPC (circuits-durable-object.ts implements it): the
 * {@link CircuitStore} calls, each run alone in the object.
 */
export interface CircuitsObject {
  record(change: SharedCircuitChange): Promise<OpenCircuit[]>;
  openCircuits(): Promise<OpenCircuit[]>;
}

/**
 * The part of a Workers `DurableObjectNamespace` binding for `ToriiCircuits` that the store uses (declared here rather
 * than depending on @cloudflare/workers-types; the platform's binding satisfies it).
 */
export interface CircuitsNamespace {
  idFromName(name: string): object;
  get(id: object): CircuitsObject;
}

/** The one object that holds a gateway's circuits (before the prefix). */
export const circuitsObjectName = 'circuits';

/**
 * A {@link CircuitStore} over the `ToriiCircuits` Durable Object: one object for every deployment of the Worker (one
 * RPC per circuit change, and one per isolate per refresh interval while the isolate serves). A fresh stub every
 * call: workerd forbids using a stub in a request other than the one that made it, and making one costs no I/O.
 *
 * @example
 * ```ts
 * // wrangler.toml: [[durable_objects.bindings]] name = "TORII_CIRCUITS", class_name = "ToriiCircuits"
 * export { ToriiCircuits } from './circuits-durable-object.ts';
 * const bus = createPolledCircuitBus(createDurableObjectCircuitStore(env.TORII_CIRCUITS), { logger, keepAlive });
 * ```
 */
export function createDurableObjectCircuitStore(
  namespace: CircuitsNamespace,
  options: { objectNamePrefix?: string } = {},
): CircuitStore {
  const name = (options.objectNamePrefix ?? '') + circuitsObjectName;
  const object = () => namespace.get(namespace.idFromName(name));
  return {
    record: (change) => object().record(change),
    openCircuits: () => object().openCircuits(),
  };
}
