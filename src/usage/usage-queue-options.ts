import type { RetryBackoff } from './usage-queue-backoff.ts';
import type { BackgroundTimers } from './usage-queue-timers.ts';
import type { UsageEvent, UsageSink, UsageSpill } from './usage-event.ts';

/** What {@link createUsageQueue} is made with. Every field but `sink` has a default. */
export interface UsageQueueOptions {
  sink: UsageSink;
  /** Where batches go when memory is full or shutdown runs out of time; without one they are dropped and counted. */
  spill?: UsageSpill;
  /** Most events per `sink.write` (default 500). */
  maxBatchSize?: number;
  /** Longest an event waits for its batch to fill before the batch is written anyway, in ms (default 1000). */
  maxDelayMs?: number;
  /** Most events held in memory, the batch being written included (default 20,000; at least `maxBatchSize`). */
  maxQueued?: number;
  /**
   * Most events held in memory on their way to the spill (default `maxQueued`). Memory is bounded by
   * `maxQueued + maxSpilling` events; a burst past both within one spill append is dropped and counted.
   */
  maxSpilling?: number;
  /** A write that has not settled by then counts as failed and is retried, in ms (default 30,000). */
  writeTimeoutMs?: number;
  /** Backoff between retries (default 200 ms doubling to 5 s, 20% jitter). */
  retryBackoff?: Partial<RetryBackoff>;
  /** Wall clock in epoch ms, for `lastError.at` (default `Date.now`). */
  now?: () => number;
  timers?: BackgroundTimers;
  /** Returns a number in [0, 1), for jitter (default `Math.random`). */
  random?: () => number;
}

/** Counters for metrics. All but `queued` and `spilling` only grow. */
export interface UsageQueueStats {
  /** Events in memory now, the batch being written included. */
  queued: number;
  /** Events in memory on their way to the spill. */
  spilling: number;
  /** Events the sink accepted (replayed ones included; a batch retried after a timeout may count twice). */
  written: number;
  /** Of `written`, the events that came back from the spill. */
  replayed: number;
  /** Failed or timed-out writes, each followed by a retry after backoff. */
  failedWrites: number;
  /** Writes that failed since the last one that succeeded: above 0 while the sink is failing. */
  consecutiveFailedWrites: number;
  /** Events stored in the spill. */
  spilled: number;
  /** Events lost: memory full with no spill (or the spill itself full or failing). Never silent: always counted. */
  dropped: number;
  /** The latest write or spill failure. */
  lastError: { message: string; at: number } | null;
  /** The latest failed or timed-out sink write (the database's reason). */
  lastWriteError: { message: string; at: number } | null;
  /** The latest failed spill append (why events were lost). */
  lastSpillError: { message: string; at: number } | null;
}

/** Stats of a queue that has seen nothing yet. */
export function emptyUsageQueueStats(): UsageQueueStats {
  return {
    queued: 0,
    spilling: 0,
    written: 0,
    replayed: 0,
    failedWrites: 0,
    consecutiveFailedWrites: 0,
    spilled: 0,
    dropped: 0,
    lastError: null,
    lastWriteError: null,
    lastSpillError: null,
  };
}

/** What one {@link UsageQueue.flush} did. */
export interface UsageQueueFlushResult {
  /** Events written to the sink during the flush. */
  written: number;
  /** Events moved to the spill during the flush (because the sink could not take them in time). */
  spilled: number;
  /** Events dropped during the flush (no spill). */
  dropped: number;
  /** Whether every queued event was written before the timeout. */
  drained: boolean;
}

/**
 * The in-memory usage queue between the request path and the {@link UsageSink}. Delivery is at least once: a write
 * that timed out may have landed, a spilled segment may be replayed again after a crash, so the sink must be
 * idempotent on `requestId` (the Drizzle sink inserts with `ON CONFLICT (request_id) DO NOTHING`).
 */
export interface UsageQueue {
  /** Queues one event: synchronous, O(1), never throws, never waits. */
  enqueue(event: UsageEvent): void;
  /**
   * Writes everything in memory now (shutdown). What cannot be written within `timeoutMs` (default 10,000) goes to
   * the spill, so nothing is lost; resolves once the spill has it.
   */
  flush(options?: { timeoutMs?: number }): Promise<UsageQueueFlushResult>;
  stats(): UsageQueueStats;
}
