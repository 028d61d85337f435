import { randomUUID } from 'node:crypto';
import { describeCircuitStoreConformance } from '../../tests/conformance/circuit-store-suite.ts';
import { startKeyCountersWorkerd } from '../../tests/conformance/key-counters-workerd.ts';

// The store runs inside workerd (tests/conformance/key-counters-test-worker.ts); each client here is its own
// connection pool, standing for one isolate.
describeCircuitStoreConformance('Durable Object (ToriiCircuits in workerd)', async () => {
  const workerd = await startKeyCountersWorkerd();
  return {
    createStores(count) {
      const prefix = `conformance:${randomUUID()}:`;
      return Array.from({ length: count }, () => workerd.circuitStore(prefix));
    },
    close: () => workerd.close(),
  };
});
