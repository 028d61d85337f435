/**
 * Runs the key-counters test Worker (key-counters-test-worker.ts) on the real workerd runtime through wrangler's
 * test harness, and gives Node tests clients that forward each `LimitStore` or `BudgetSpendCounters` call over HTTP
 * to the production Durable Object stores running inside it. Each client has its own connection pool, so several
 * clients stand for several isolates racing on the same objects.
 */
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { createTestHarness } from 'wrangler';
import type { BudgetSpendCounters, SpendCounterId } from '../../src/limits/budget-spend-counters.ts';
import type { LimitLease, LimitStore } from '../../src/limits/limit-store.ts';
import type { CircuitStore, OpenCircuit } from '../../src/routing/polled-circuit-bus.ts';

/** The class the test Worker exports and binds as `TORII_KEY_COUNTERS`. */
const className = 'ToriiKeyCounters';

const configPath = fileURLToPath(new URL('./key-counters.wrangler.jsonc', import.meta.url));

/** The running Worker and what tests do with it. */
export interface KeyCountersWorkerd {
  /** A client of the limit store whose objects are named `<prefix>key:<keyId>`, over its own connections. */
  limitStore(prefix: string): LimitStore;
  /** A client of the spend counters whose objects are named `<prefix>key:<keyId>`, over its own connections. */
  spendCounters(prefix: string): BudgetSpendCounters;
  /** A client of the circuit store whose object is named `<prefix>circuits`, over its own connections. */
  circuitStore(prefix: string): CircuitStore;
  /** Evicts a running object (as the platform does when it is idle or moved), keeping its durable storage. */
  evict(objectName: string): Promise<void>;
  /** Runs SQL in an object's storage, to look at what it persisted. */
  query(objectName: string, sql: string): Promise<Record<string, unknown>[]>;
  /** Closes every client and stops workerd. */
  close(): Promise<void>;
}

/** Starts workerd with the test Worker (about a second). */
export async function startKeyCountersWorkerd(): Promise<KeyCountersWorkerd> {
  const harness = createTestHarness({ workers: [{ configPath }] });
  const { url } = await harness.listen();
  const pools: Pool[] = [];

  const caller = (path: '/limit-store' | '/spend-counters' | '/circuit-store', prefix: string) => {
    const pool = new Pool(url.origin, { connections: 8 });
    pools.push(pool);
    return async (method: string, ...parameters: unknown[]): Promise<unknown> => {
      const response = await pool.request({
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prefix, method, arguments: parameters }),
      });
      const answer = (await response.body.json()) as { result?: unknown; error?: string };
      if (response.statusCode !== 200) {
        throw new Error(`${method} failed in workerd (${response.statusCode}): ${answer.error ?? 'no message'}`);
      }
      return answer.result;
    };
  };

  const worker = harness.getWorker();
  return {
    limitStore(prefix) {
      const call = caller('/limit-store', prefix);
      return {
        lease: async (request) => (await call('lease', request)) as LimitLease,
        release: async (request) => void (await call('release', request)),
        add: async (request) => void (await call('add', request)),
      };
    },
    spendCounters(prefix) {
      const call = caller('/spend-counters', prefix);
      return {
        add: async (counter: SpendCounterId, amountUsd: number) => void (await call('add', counter, amountUsd)),
        read: async (counter) => (await call('read', counter)) as number,
        raiseTo: async (counter, ledgerUsd) => (await call('raiseTo', counter, ledgerUsd)) as number,
        forget() {},
      };
    },
    circuitStore(prefix) {
      const call = caller('/circuit-store', prefix);
      return {
        record: async (change) => (await call('record', change)) as OpenCircuit[],
        openCircuits: async () => (await call('openCircuits')) as OpenCircuit[],
      };
    },
    evict: (objectName) => worker.evictDurableObject(className, { name: objectName }),
    async query(objectName, sql) {
      const storage = await worker.getDurableObjectStorage(className, { name: objectName });
      return (await storage.exec(sql)) as Record<string, unknown>[];
    },
    async close() {
      await Promise.all(pools.map((pool) => pool.close()));
      await harness.close();
    },
  };
}
