import type { GatewayLogger } from '../../src/services.ts';
import type { UsageEvent, UsageSink } from '../../src/usage/usage-event.ts';

/** What {@link createWorkerUsageBatcher} is made with. */
export interface WorkerUsageBatcherOptions {
  /** Where batches go: the Queue producer, or Postgres directly when the Worker has no Queue. */
  sink: UsageSink;
  /**
   * Keeps a batch's write alive after the response (the invocation's `waitUntil`): called once per recorded event
   * with the promise of the batch that holds it, so every request whose event is in a batch waits for that batch.
   */
  keepAlive: (work: Promise<unknown>) => void;
  logger: GatewayLogger;
  /** Events recorded within this many ms of a batch's first go in that batch (default 100). */
  batchDelayMs?: number;
  /** Most events per write (default 500); a full batch is written at once. */
  maxBatchSize?: number;
  /** A write not settled by then counts as failed, ms (default 10,000). */
  writeTimeoutMs?: number;
  /**
   * Retries of a failed write stop this long after the batch's first event, ms (default 25,000): workerd cancels
   * work kept by `waitUntil` 30 s after the response, so a batch still unwritten by then is logged, whole, as lost.
   */
  giveUpAfterMs?: number;
  /** Monotonic clock, ms (default `performance.now`). */
  now?: () => number;
}

/** The Worker's usage hook: the request path hands each finished request's event to `record`. */
export interface WorkerUsageBatcher {
  /** Adds the event to the open batch (opening one if needed); synchronous, never throws. */
  record(event: UsageEvent): void;
  /** Counts since the isolate started. */
  stats(): { written: number; failedWrites: number; lost: number };
}

interface Batch {
  events: UsageEvent[];
  openedAt: number;
  /** Settles once the batch is written or given up. */
  done: Promise<void>;
  /** Starts the write now (a full batch) rather than when the batch delay ends; idempotent. */
  startNow: () => void;
}

/** Events per log line when a batch is logged as lost (keeps each line well under the log size limits). */
const lostEventsPerLine = 50;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Batches usage events per isolate and writes each batch inside the `waitUntil` of every request whose event it
 * holds, which is what keeps a batch alive on workerd (there is no process to outlive a request). A batch opens with
 * the first event after the previous one left, collects events for `batchDelayMs` (or until `maxBatchSize`), and is
 * written once; a failed write is retried with backoff (100 ms doubling to 2 s) for up to `giveUpAfterMs`.
 *
 * What can be lost: a batch whose writes failed for `giveUpAfterMs` straight (the Queue, or Postgres without a
 * Queue, unreachable for ~25 s), and a batch being written when the isolate is killed (a crash, or workerd's own
 * cut-off). A batch given up is logged at error level with every event in it (`usage events lost`), so nothing
 * disappears silently and the rows can be replayed from the logs.
 *
 * @example
 * ```ts
 * const batcher = createWorkerUsageBatcher({ sink: createQueueUsageSink(env.TORII_USAGE_QUEUE), keepAlive, logger });
 * const accounting = assembleAccounting({ ..., recordUsage: (event) => batcher.record(event) });
 * ```
 */
export function createWorkerUsageBatcher(options: WorkerUsageBatcherOptions): WorkerUsageBatcher {
  const { sink, keepAlive, logger } = options;
  const batchDelayMs = options.batchDelayMs ?? 100;
  const maxBatchSize = options.maxBatchSize ?? 500;
  const writeTimeoutMs = options.writeTimeoutMs ?? 10_000;
  const giveUpAfterMs = options.giveUpAfterMs ?? 25_000;
  const now = options.now ?? (() => performance.now());
  const counts = { written: 0, failedWrites: 0, lost: 0 };
  let open: Batch | undefined;

  const writeOnce = async (events: readonly UsageEvent[]): Promise<void> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`usage write timed out after ${writeTimeoutMs} ms`)), writeTimeoutMs);
    });
    try {
      await Promise.race([sink.write(events), timeout]);
    } finally {
      clearTimeout(timer);
    }
  };

  const giveUp = (batch: Batch, error: unknown): void => {
    counts.lost += batch.events.length;
    for (let first = 0; first < batch.events.length; first += lostEventsPerLine) {
      logger.error('usage events lost: the usage sink refused them for too long', {
        lost: batch.events.length,
        error: error instanceof Error ? error.message : String(error),
        events: batch.events.slice(first, first + lostEventsPerLine),
      });
    }
  };

  const write = async (batch: Batch): Promise<void> => {
    if (open === batch) open = undefined;
    let backoffMs = 100;
    for (;;) {
      try {
        await writeOnce(batch.events);
        counts.written += batch.events.length;
        return;
      } catch (error) {
        counts.failedWrites++;
        if (now() + backoffMs - batch.openedAt > giveUpAfterMs) {
          giveUp(batch, error);
          return;
        }
        logger.warn('usage write failed; retrying', {
          events: batch.events.length,
          retryInMs: backoffMs,
          error: error instanceof Error ? error.message : String(error),
        });
        await sleep(backoffMs);
        backoffMs = Math.min(backoffMs * 2, 2_000);
      }
    }
  };

  const openBatch = (): Batch => {
    let start!: () => void;
    const started = new Promise<void>((resolve) => (start = resolve));
    const timer = setTimeout(() => start(), batchDelayMs);
    const batch: Batch = {
      events: [],
      openedAt: now(),
      done: started.then(() => write(batch)),
      startNow() {
        clearTimeout(timer);
        start();
      },
    };
    return batch;
  };

  return {
    record(event) {
      if (open === undefined) open = openBatch();
      const batch = open;
      batch.events.push(event);
      keepAlive(batch.done);
      if (batch.events.length >= maxBatchSize) {
        open = undefined;
        batch.startNow();
      }
    },
    stats: () => ({ ...counts }),
  };
}
