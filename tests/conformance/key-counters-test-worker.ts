/**
 * Test-only Worker (tests/conformance/key-counters.wrangler.jsonc): runs the production Durable Object stores inside
 * workerd and answers their calls over HTTP, so tests in Node can drive the real code on the real runtime.
 *
 * `POST /limit-store`, `POST /spend-counters` and `POST /circuit-store` take `{ "prefix", "method", "arguments" }` and answer
 * `{ "result" }` (or 500 with `{ "error" }`). The stores are made once per isolate and object-name prefix and then
 * reused by every request, as the gateway keeps its stores for the isolate's life: a store that kept a stub across
 * requests would break here the way it would in production.
 */
import type { BudgetSpendCounters } from '../../src/limits/budget-spend-counters.ts';
import type { LimitStore } from '../../src/limits/limit-store.ts';
import {
  createDurableObjectLimitStore,
  type KeyCountersNamespace,
} from '../../adapters/cloudflare/durable-object-limit-store.ts';
import { createDurableObjectSpendCounters } from '../../adapters/cloudflare/durable-object-spend-counters.ts';
import {
  createDurableObjectCircuitStore,
  type CircuitsNamespace,
} from '../../adapters/cloudflare/durable-object-circuit-store.ts';
import type { CircuitStore } from '../../src/routing/polled-circuit-bus.ts';

export { ToriiCircuits } from '../../adapters/cloudflare/circuits-durable-object.ts';
export { ToriiKeyCounters } from '../../adapters/cloudflare/key-counters-durable-object.ts';

/** The test Worker's bindings. */
interface TestWorkerEnvironment {
  TORII_KEY_COUNTERS: KeyCountersNamespace;
  TORII_CIRCUITS: CircuitsNamespace;
}

/** One forwarded call. */
interface ForwardedCall {
  prefix: string;
  method: string;
  arguments: unknown[];
}

const limitStores = new Map<string, LimitStore>();
const spendCounters = new Map<string, BudgetSpendCounters>();
const circuitStores = new Map<string, CircuitStore>();

const limitStoreMethods = new Set(['lease', 'release', 'add']);
const spendCounterMethods = new Set(['add', 'read', 'raiseTo']);
const circuitStoreMethods = new Set(['record', 'openCircuits']);

function storeFor(path: string, prefix: string, environment: TestWorkerEnvironment): Record<string, unknown> {
  const options = { objectNamePrefix: prefix };
  if (path === '/circuit-store') {
    let store = circuitStores.get(prefix);
    if (store === undefined) {
      store = createDurableObjectCircuitStore(environment.TORII_CIRCUITS, options);
      circuitStores.set(prefix, store);
    }
    return store as unknown as Record<string, unknown>;
  }
  if (path === '/limit-store') {
    let store = limitStores.get(prefix);
    if (store === undefined) {
      store = createDurableObjectLimitStore(environment.TORII_KEY_COUNTERS, options);
      limitStores.set(prefix, store);
    }
    return store as unknown as Record<string, unknown>;
  }
  let counters = spendCounters.get(prefix);
  if (counters === undefined) {
    counters = createDurableObjectSpendCounters(environment.TORII_KEY_COUNTERS, options);
    spendCounters.set(prefix, counters);
  }
  return counters as unknown as Record<string, unknown>;
}

export default {
  async fetch(request: Request, environment: TestWorkerEnvironment): Promise<Response> {
    const { pathname } = new URL(request.url);
    const methods =
      pathname === '/limit-store'
        ? limitStoreMethods
        : pathname === '/spend-counters'
          ? spendCounterMethods
          : pathname === '/circuit-store'
            ? circuitStoreMethods
            : null;
    if (request.method !== 'POST' || methods === null) return new Response('Not found', { status: 404 });
    const call = (await request.json()) as ForwardedCall;
    if (!methods.has(call.method)) return Response.json({ error: `No method ${call.method}` }, { status: 400 });
    const store = storeFor(pathname, call.prefix, environment);
    try {
      const method = store[call.method] as (...parameters: unknown[]) => Promise<unknown>;
      const result = await method.apply(store, call.arguments);
      return Response.json({ result: result ?? null });
    } catch (error) {
      return Response.json({ error: error instanceof Error ? error.message : String(error) }, { status: 500 });
    }
  },
};
