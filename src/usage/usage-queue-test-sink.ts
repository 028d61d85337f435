import type { UsageEvent, UsageSink, UsageSpill } from './usage-event.ts';

/** How the test sink answers writes: store them, throw, or never settle. */
export type TestSinkMode = 'accept' | 'fail' | 'hang';

/**
 * An in-memory {@link UsageSink} that behaves like the Postgres one (a batch lands whole, and a request id stored
 * once is never stored again, as `ON CONFLICT DO NOTHING` does) and can be told to fail or hang. For tests.
 */
export interface TestUsageSink extends UsageSink {
  mode: TestSinkMode;
  /** Stored events by request id. */
  readonly stored: Map<string, UsageEvent>;
  /** Sizes of the batches stored, in order. */
  readonly storedBatchSizes: number[];
  /** Every call to `write`, including failed and hung ones. */
  writeCalls: number;
  /** Events that arrived again after being stored (harmless re-deliveries). */
  redelivered: number;
  /** Settles writes that hung: stores them (`accept`) or rejects them (`fail`). */
  releaseHung(outcome: 'accept' | 'fail'): void;
}

/**
 * @example
 * ```ts
 * const sink = createTestUsageSink();
 * sink.mode = 'fail';
 * ```
 */
export function createTestUsageSink(): TestUsageSink {
  let hung: { events: readonly UsageEvent[]; resolve: () => void; reject: (error: Error) => void }[] = [];
  const store = (events: readonly UsageEvent[]) => {
    for (const event of events) {
      if (sink.stored.has(event.requestId)) sink.redelivered += 1;
      else sink.stored.set(event.requestId, event);
    }
    sink.storedBatchSizes.push(events.length);
  };
  const sink: TestUsageSink = {
    mode: 'accept',
    stored: new Map(),
    storedBatchSizes: [],
    writeCalls: 0,
    redelivered: 0,
    async write(events) {
      sink.writeCalls += 1;
      if (sink.mode === 'fail') throw new Error('sink unavailable');
      if (sink.mode === 'hang') {
        return new Promise<void>((resolve, reject) => hung.push({ events: [...events], resolve, reject }));
      }
      store(events);
    },
    releaseHung(outcome) {
      const writes = hung;
      hung = [];
      for (const write of writes) {
        if (outcome === 'accept') {
          store(write.events);
          write.resolve();
        } else {
          write.reject(new Error('sink failed late'));
        }
      }
    },
  };
  return sink;
}

/** An in-memory {@link UsageSpill} for tests of the queue (the real one is files on disk, adapters/node). */
export interface TestUsageSpill extends UsageSpill {
  /** Spilled chunks, oldest first. */
  readonly chunks: (readonly UsageEvent[])[];
  /** When set, `append` rejects. */
  failAppends: boolean;
}

/**
 * @example
 * ```ts
 * const spill = createTestUsageSpill();
 * const queue = createUsageQueue({ sink, spill });
 * ```
 */
export function createTestUsageSpill(initial: (readonly UsageEvent[])[] = []): TestUsageSpill {
  const spill: TestUsageSpill = {
    chunks: [...initial],
    failAppends: false,
    async append(events) {
      if (spill.failAppends) throw new Error('disk full');
      spill.chunks.push([...events]);
    },
    async replay(write) {
      let replayed = 0;
      for (let chunk = spill.chunks[0]; chunk !== undefined; chunk = spill.chunks[0]) {
        await write(chunk);
        spill.chunks.shift();
        replayed += chunk.length;
      }
      return replayed;
    },
    async size() {
      return spill.chunks.reduce((total, chunk) => total + chunk.length, 0);
    },
  };
  return spill;
}
