/**
 * The one conformance suite of the `CircuitStore` seam (src/routing/polled-circuit-bus.ts). Every implementation calls
 * {@link describeCircuitStoreConformance} from the test beside it: the memory reference (src/routing), the Durable
 * Object (in workerd, through tests/conformance/key-counters-workerd.ts) and Upstash (the REST bridge in front of a
 * real Redis from `TORII_TEST_REDIS_URL`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CircuitStore, OpenCircuit } from '../../src/routing/polled-circuit-bus.ts';

/** A store under test. */
export interface CircuitStoreSubject {
  /** `count` clients over one fresh namespace no other call sees (separate connections where the store has them). */
  createStores(count: number): CircuitStore[];
  close(): Promise<void>;
}

const byDeployment = (open: readonly OpenCircuit[]) =>
  Object.fromEntries(open.map((circuit) => [circuit.deploymentId, circuit]));

/** Describes the conformance tests for one store. */
export function describeCircuitStoreConformance(name: string, open: () => Promise<CircuitStoreSubject>): void {
  describe(`CircuitStore conformance: ${name}`, { timeout: 60_000 }, () => {
    let subject: CircuitStoreSubject;

    beforeAll(async () => {
      subject = await open();
    }, 60_000);

    afterAll(async () => {
      await subject?.close();
    }, 60_000);

    it('answers an opening to the writer and lists it for every other client', async () => {
      const [one, two] = subject.createStores(2) as [CircuitStore, CircuitStore];
      expect(await two.openCircuits()).toEqual([]);
      const openUntil = Date.now() + 60_000;
      const answered = await one.record({ origin: 'process-1', deploymentId: 'g/0', state: 'open', openUntil });
      expect(answered).toEqual([{ deploymentId: 'g/0', openUntil, origin: 'process-1' }]);
      expect(await two.openCircuits()).toEqual([{ deploymentId: 'g/0', openUntil, origin: 'process-1' }]);
    });

    it('keeps the later end of two openings, with the origin of the later one', async () => {
      const [one, two] = subject.createStores(2) as [CircuitStore, CircuitStore];
      const later = Date.now() + 120_000;
      await one.record({ origin: 'process-1', deploymentId: 'g/0', state: 'open', openUntil: later });
      const answered = await two.record({
        origin: 'process-2',
        deploymentId: 'g/0',
        state: 'open',
        openUntil: later - 60_000,
      });
      expect(answered).toEqual([{ deploymentId: 'g/0', openUntil: later, origin: 'process-1' }]);
      const longer = later + 60_000;
      await two.record({ origin: 'process-2', deploymentId: 'g/0', state: 'open', openUntil: longer });
      expect(await one.openCircuits()).toEqual([{ deploymentId: 'g/0', openUntil: longer, origin: 'process-2' }]);
    });

    it('forgets a circuit when it is closed, and only that one', async () => {
      const [one, two] = subject.createStores(2) as [CircuitStore, CircuitStore];
      const openUntil = Date.now() + 60_000;
      await one.record({ origin: 'process-1', deploymentId: 'g/0', state: 'open', openUntil });
      await one.record({ origin: 'process-1', deploymentId: 'g/1', state: 'open', openUntil });
      const answered = await two.record({ origin: 'process-2', deploymentId: 'g/0', state: 'closed' });
      expect(answered.map((circuit) => circuit.deploymentId)).toEqual(['g/1']);
      expect(byDeployment(await one.openCircuits())).toEqual({
        'g/1': { deploymentId: 'g/1', openUntil, origin: 'process-1' },
      });
    });

    it('records no opening that has already ended, and stops listing one once it ends', async () => {
      const [one] = subject.createStores(1) as [CircuitStore];
      expect(await one.record({ origin: 'p', deploymentId: 'g/0', state: 'open', openUntil: Date.now() - 1 })).toEqual(
        [],
      );
      await one.record({ origin: 'p', deploymentId: 'g/1', state: 'open', openUntil: Date.now() + 300 });
      expect((await one.openCircuits()).map((circuit) => circuit.deploymentId)).toEqual(['g/1']);
      // Polled until its end has passed (a generous bound for a busy machine), not slept for.
      let listed = await one.openCircuits();
      for (let round = 0; round < 600 && listed.length > 0; round++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        listed = await one.openCircuits();
      }
      expect(listed).toEqual([]);
    });

    it('lists every opening of many clients racing on different deployments', async () => {
      const stores = subject.createStores(4);
      const openUntil = Date.now() + 60_000;
      await Promise.all(
        Array.from({ length: 40 }, (_, index) =>
          stores[index % stores.length]!.record({
            origin: `process-${index % stores.length}`,
            deploymentId: `group/${index}`,
            state: 'open',
            openUntil: openUntil + index,
          }),
        ),
      );
      const listed = byDeployment(await stores[0]!.openCircuits());
      expect(Object.keys(listed)).toHaveLength(40);
      expect(listed['group/39']).toEqual({ deploymentId: 'group/39', openUntil: openUntil + 39, origin: 'process-3' });
    });
  });
}
