import { defaultRetryBackoff, retryDelayMs, type RetryBackoff } from './usage-queue-backoff.ts';
import {
  emptyUsageQueueStats,
  type UsageQueue,
  type UsageQueueFlushResult,
  type UsageQueueOptions,
} from './usage-queue-options.ts';
import { platformTimers } from './usage-queue-timers.ts';
import type { UsageEvent } from './usage-event.ts';

export type { UsageQueue, UsageQueueFlushResult, UsageQueueOptions, UsageQueueStats } from './usage-queue-options.ts';

/** Thrown into a spill replay to stop it early (shutdown, or live events piling up); not a failure. */
const replayPaused = new Error('usage spill replay paused');

/**
 * The batching usage queue. Events are written in batches of `maxBatchSize`, or after `maxDelayMs` when a batch
 * fills slowly, by a single writer: one `sink.write` at a time keeps batches in order and one database connection
 * busy at most, and a 500-row insert every few ms is far more than one process produces.
 *
 * When a write fails (or times out) the batch goes back to the head of the queue and is retried after exponential
 * backoff with jitter; new events keep queueing meanwhile. When memory would exceed `maxQueued`, the oldest batch is
 * appended to the spill (or, with no spill, dropped and counted in `dropped`). Once the live backlog is written, spilled
 * events are replayed into the sink oldest first (memory goes first because it is what a crash would lose). Leftovers of
 * an earlier process are replayed at start.
 *
 * Delivery is at least once (see {@link UsageQueue}); the sink's idempotency on `requestId` makes it exactly once in
 * the ledger. Events in memory when the process dies without a flush are lost: at most `maxQueued`, normally one
 * batch or `maxDelayMs` worth.
 *
 * @example
 * ```ts
 * const queue = createUsageQueue({ sink: drizzleUsageSink, spill: await openFileUsageSpill({ directory }) });
 * queue.enqueue(event); // on the request path
 * await queue.flush({ timeoutMs: 5000 }); // on SIGTERM
 * ```
 */
export function createUsageQueue(options: UsageQueueOptions): UsageQueue {
  const { sink, spill } = options;
  const maxBatchSize = positiveInteger(options.maxBatchSize ?? 500, 'maxBatchSize');
  const maxDelayMs = options.maxDelayMs ?? 1000;
  const maxQueued = Math.max(positiveInteger(options.maxQueued ?? 20_000, 'maxQueued'), maxBatchSize);
  const maxSpilling = positiveInteger(options.maxSpilling ?? maxQueued, 'maxSpilling');
  const writeTimeoutMs = options.writeTimeoutMs ?? 30_000;
  const backoff: RetryBackoff = { ...defaultRetryBackoff, ...options.retryBackoff };
  const now = options.now ?? Date.now;
  const timers = options.timers ?? platformTimers;
  const random = options.random ?? Math.random;

  /** Sealed batches, oldest first. */
  let ready: UsageEvent[][] = [];
  /** The batch still filling. */
  let filling: UsageEvent[] = [];
  /** The live batch being written. */
  let inFlight: UsageEvent[] | undefined;
  let batchTimer: unknown;
  let retryTimer: unknown;
  let pumping = false;
  let flushing = 0;
  let consecutiveFailures = 0;
  /** Appends to the spill, chained so they land in order. */
  let spillChain: Promise<void> = Promise.resolve();
  /** Counts completed appends, so a replay that found nothing knows whether something arrived meanwhile. */
  let spillAppends = 0;
  let spillMayHaveEvents = spill !== undefined;
  let drainedWaiters: (() => void)[] = [];
  const stats = emptyUsageQueueStats();

  function noteError(error: unknown, kind?: 'write' | 'spill'): void {
    const noted = { message: error instanceof Error ? error.message : String(error), at: now() };
    stats.lastError = noted;
    if (kind === 'write') stats.lastWriteError = { ...noted };
    else if (kind === 'spill') stats.lastSpillError = { ...noted };
  }

  function seal(): void {
    if (batchTimer !== undefined) {
      timers.clearTimeout(batchTimer);
      batchTimer = undefined;
    }
    if (filling.length > 0) {
      ready.push(filling);
      filling = [];
    }
  }

  function schedulePump(): void {
    if (!pumping && retryTimer === undefined) void pump();
  }

  /** Moves the oldest batches out of memory until it holds at most `maxQueued` events. */
  function relieveMemory(): void {
    while (stats.queued > maxQueued) {
      if (ready.length === 0) seal();
      const oldest = ready.shift();
      if (oldest === undefined) return;
      stats.queued -= oldest.length;
      toSpill(oldest, false);
    }
  }

  function toSpill(batch: readonly UsageEvent[], force: boolean): void {
    if (spill === undefined || (!force && stats.spilling + batch.length > maxSpilling)) {
      stats.dropped += batch.length;
      return;
    }
    stats.spilling += batch.length;
    spillChain = spillChain
      .then(() => spill.append(batch))
      .then(
        () => {
          stats.spilled += batch.length;
          spillAppends += 1;
          spillMayHaveEvents = true;
        },
        (error: unknown) => {
          stats.dropped += batch.length;
          noteError(error, 'spill');
        },
      )
      .finally(() => {
        stats.spilling -= batch.length;
      });
  }

  function writeWithTimeout(batch: readonly UsageEvent[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = timers.setTimeout(
        () => reject(new Error(`usage sink write timed out after ${writeTimeoutMs} ms`)),
        writeTimeoutMs,
      );
      Promise.resolve()
        .then(() => sink.write(batch))
        .then(
          () => {
            timers.clearTimeout(timer);
            resolve();
          },
          (error: unknown) => {
            timers.clearTimeout(timer);
            reject(error);
          },
        );
    });
  }

  function failed(error: unknown): void {
    stats.failedWrites += 1;
    consecutiveFailures += 1;
    noteError(error, 'write');
    retryTimer = timers.setTimeout(
      () => {
        retryTimer = undefined;
        schedulePump();
      },
      retryDelayMs(consecutiveFailures, backoff, random),
    );
  }

  function notifyIfDrained(): void {
    if (stats.queued > 0 || drainedWaiters.length === 0) return;
    const waiters = drainedWaiters;
    drainedWaiters = [];
    for (const waiter of waiters) waiter();
  }

  /** Writes one live batch; false when it failed (the batch is back at the head of the queue). */
  async function writeLive(batch: UsageEvent[]): Promise<boolean> {
    inFlight = batch;
    try {
      await writeWithTimeout(batch);
    } catch (error) {
      ready.unshift(batch);
      failed(error);
      return false;
    } finally {
      inFlight = undefined;
    }
    stats.queued -= batch.length;
    stats.written += batch.length;
    consecutiveFailures = 0;
    notifyIfDrained();
    return true;
  }

  /** Replays the spill until it is empty or paused; false when a write failed. */
  async function replaySpill(): Promise<boolean> {
    if (spill === undefined) return true;
    const appendsBefore = spillAppends;
    try {
      const replayedNow = await spill.replay(async (events) => {
        for (let start = 0; start < events.length; start += maxBatchSize) {
          if (flushing > 0 || ready.length > 0) throw replayPaused;
          const chunk = events.slice(start, start + maxBatchSize);
          await writeWithTimeout(chunk);
          stats.written += chunk.length;
          stats.replayed += chunk.length;
          consecutiveFailures = 0;
        }
      });
      if (replayedNow === 0 && spillAppends === appendsBefore) spillMayHaveEvents = false;
      return true;
    } catch (error) {
      if (error === replayPaused) return true;
      failed(error);
      return false;
    }
  }

  async function pump(): Promise<void> {
    pumping = true;
    try {
      while (retryTimer === undefined) {
        const batch = ready.shift();
        if (batch !== undefined) {
          if (!(await writeLive(batch))) break;
        } else if (flushing > 0 && filling.length > 0) {
          seal();
        } else if (spillMayHaveEvents && flushing === 0) {
          await replaySpill();
        } else {
          break;
        }
      }
    } catch (error) {
      // Nothing above throws; this only guards the invariant that the pump never dies with `pumping` set.
      noteError(error);
    } finally {
      pumping = false;
    }
  }

  if (spill !== undefined) {
    // Leftovers of an earlier process: replay them once the event loop is free.
    timers.setTimeout(schedulePump, 0);
  }

  return {
    enqueue(event) {
      try {
        filling.push(event);
        stats.queued += 1;
        if (filling.length >= maxBatchSize) {
          seal();
          schedulePump();
        } else if (batchTimer === undefined) {
          batchTimer = timers.setTimeout(() => {
            batchTimer = undefined;
            seal();
            schedulePump();
          }, maxDelayMs);
        }
        if (stats.queued > maxQueued) relieveMemory();
      } catch (error) {
        noteError(error);
      }
    },

    async flush({ timeoutMs = 10_000 } = {}) {
      const before = { written: stats.written, spilled: stats.spilled, dropped: stats.dropped };
      flushing += 1;
      try {
        seal();
        if (retryTimer !== undefined) {
          // Shutdown tries once more at once rather than waiting out the backoff.
          timers.clearTimeout(retryTimer);
          retryTimer = undefined;
        }
        schedulePump();
        const drained = await new Promise<boolean>((resolve) => {
          if (stats.queued === 0) return resolve(true);
          const deadline = timers.setTimeout(() => resolve(false), timeoutMs);
          drainedWaiters.push(() => {
            timers.clearTimeout(deadline);
            resolve(true);
          });
        });
        if (!drained) {
          seal();
          const batches = ready;
          ready = [];
          for (const batch of batches) {
            stats.queued -= batch.length;
            toSpill(batch, true);
          }
          // The batch being written may still land; spilling a copy too only risks a duplicate the sink ignores.
          if (inFlight !== undefined) toSpill(inFlight, true);
        }
        await spillChain;
        return {
          written: stats.written - before.written,
          spilled: stats.spilled - before.spilled,
          dropped: stats.dropped - before.dropped,
          drained,
        } satisfies UsageQueueFlushResult;
      } finally {
        flushing -= 1;
      }
    },

    stats() {
      const copy = (noted: { message: string; at: number } | null) => (noted === null ? null : { ...noted });
      return {
        ...stats,
        consecutiveFailedWrites: consecutiveFailures,
        lastError: copy(stats.lastError),
        lastWriteError: copy(stats.lastWriteError),
        lastSpillError: copy(stats.lastSpillError),
      };
    },
  };
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new Error(`usage queue: ${name} must be a positive integer.`);
  return value;
}
