import { describe, expect, it } from 'vitest';
import { describeCircuitStoreConformance } from '../../tests/conformance/circuit-store-suite.ts';
import type { SharedCircuitChange } from './circuit-bus.ts';
import { createPolledCircuitBus, type CircuitStore, type OpenCircuit } from './polled-circuit-bus.ts';

/** The reference store: a map in memory with the seam's rules (the later end wins, a closing deletes). */
function memoryCircuitStore(wallNow: () => number = Date.now): CircuitStore & { reads: number } {
  const circuits = new Map<string, OpenCircuit>();
  const open = () => [...circuits.values()].filter((circuit) => circuit.openUntil > wallNow());
  const store = {
    reads: 0,
    async record(change: SharedCircuitChange) {
      if (change.state === 'closed') circuits.delete(change.deploymentId);
      else if (change.openUntil > wallNow() && (circuits.get(change.deploymentId)?.openUntil ?? 0) < change.openUntil)
        circuits.set(change.deploymentId, {
          deploymentId: change.deploymentId,
          openUntil: change.openUntil,
          origin: change.origin,
        });
      return open();
    },
    async openCircuits() {
      store.reads++;
      return open();
    },
  };
  return store;
}

describeCircuitStoreConformance('memory (the reference)', async () => ({
  createStores(count) {
    const store = memoryCircuitStore();
    return Array.from({ length: count }, () => store);
  },
  close: async () => {},
}));

const quiet = { info() {}, warn() {}, error() {} };

/** Lets the background store calls the bus made settle. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('createPolledCircuitBus', () => {
  it('brings another process an opening at its next refresh, and its closing at the one after', async () => {
    const clock = { now: 0, wall: 1_000_000 };
    const store = memoryCircuitStore(() => clock.wall);
    const options = { logger: quiet, refreshMs: 1_000, now: () => clock.now, wallNow: () => clock.wall };
    const one = createPolledCircuitBus(store, options);
    const two = createPolledCircuitBus(store, options);
    const heard: SharedCircuitChange[] = [];
    two.subscribe((change) => heard.push(change));
    two.refreshIfDue();
    await settle();
    expect(store.reads).toBe(1);

    one.publish({ origin: 'one', deploymentId: 'g/0', state: 'open', openUntil: 1_060_000 });
    await settle();
    clock.now = 999;
    two.refreshIfDue();
    await settle();
    // Not due yet: the bound is one refresh interval.
    expect(heard).toEqual([]);
    clock.now = 1_000;
    two.refreshIfDue();
    await settle();
    expect(heard).toEqual([{ origin: 'one', deploymentId: 'g/0', state: 'open', openUntil: 1_060_000 }]);
    // Heard once: the next reads list it with the same end.
    clock.now = 2_000;
    two.refreshIfDue();
    await settle();
    expect(heard).toHaveLength(1);

    one.publish({ origin: 'one', deploymentId: 'g/0', state: 'closed' });
    clock.now = 3_000;
    two.refreshIfDue();
    await settle();
    expect(heard.at(-1)).toEqual({ origin: 'circuit-store', deploymentId: 'g/0', state: 'closed' });
  });

  it('hears neither its own changes back nor a closing for an opening that simply ran out', async () => {
    const clock = { now: 0, wall: 1_000_000 };
    const store = memoryCircuitStore(() => clock.wall);
    const bus = createPolledCircuitBus(store, { logger: quiet, now: () => clock.now, wallNow: () => clock.wall });
    const heard: SharedCircuitChange[] = [];
    bus.subscribe((change) => heard.push(change));
    bus.publish({ origin: 'me', deploymentId: 'g/0', state: 'open', openUntil: 1_010_000 });
    await settle();
    await store.record({ origin: 'other', deploymentId: 'g/1', state: 'open', openUntil: 1_005_000 });
    clock.now = 5_000;
    bus.refreshIfDue();
    await settle();
    expect(heard).toEqual([{ origin: 'other', deploymentId: 'g/1', state: 'open', openUntil: 1_005_000 }]);
    // Both run out: each process's own breaker probes; nobody saw the deployments recover.
    clock.wall = 1_020_000;
    clock.now = 10_000;
    bus.refreshIfDue();
    await settle();
    expect(heard).toHaveLength(1);
  });

  it('reads once at a time, logs a store that fails (once a minute), and gives up on a read that hangs', async () => {
    const clock = { now: 0 };
    let calls = 0;
    const warnings: string[] = [];
    const failing: CircuitStore = {
      record: () => Promise.reject(new Error('store down')),
      openCircuits: () => {
        calls++;
        return calls === 1 ? new Promise<OpenCircuit[]>(() => {}) : Promise.reject(new Error('store down'));
      },
    };
    const kept: Promise<unknown>[] = [];
    const bus = createPolledCircuitBus(failing, {
      logger: { ...quiet, warn: (message) => warnings.push(message) },
      now: () => clock.now,
      keepAlive: (work) => kept.push(work),
    });
    bus.refreshIfDue();
    clock.now = 5_000;
    bus.refreshIfDue();
    expect(calls).toBe(1);
    clock.now = 20_000;
    bus.refreshIfDue();
    expect(calls).toBe(2);
    bus.publish({ origin: 'me', deploymentId: 'g/0', state: 'closed' });
    await Promise.all(kept.slice(1));
    // The write failed within the minute of the read's failure: not logged again.
    expect(warnings).toEqual(['the shared circuit store could not be read']);
    expect(kept).toHaveLength(3);
    clock.now = 90_000;
    bus.refreshIfDue();
    await Promise.all(kept.slice(3));
    expect(warnings).toEqual([
      'the shared circuit store could not be read',
      'the shared circuit store could not be read',
    ]);
  });
});
