import { Worker } from 'node:worker_threads';
import type { PostgresUsageWriter } from '../shared/database-accounting-stores.ts';
import { DatabaseOperationError } from '../shared/database-errors.ts';
import type { UsageThreadAnswer, UsageThreadRequest, UsageThreadSettings } from './postgres-usage-thread-messages.ts';

/** Options of {@link openPostgresUsageThread}. */
export interface PostgresUsageThreadOptions {
  /** The `DATABASE_URL`. */
  url: string;
  /** The thread's program: postgres-usage-thread-main.ts, or its build `dist/postgres-usage-thread-main.js`. */
  threadFile: URL;
  /** The ledger's insert, `$1` the batch's JSON (`usageInsertStatement`). */
  statement: string;
  /** How much lower than the process the thread runs on Linux, in nice steps (default 10, see thread-priority.ts). */
  niceness?: number;
  /** How long `close()` waits for the inserts already sent and the connection's end, ms (default 5,000). */
  closeTimeoutMs?: number;
  /** Called with each thread once it is started (tests). */
  onThread?: (thread: Worker) => void;
}

/** A pending insert's settlement. */
interface PendingInsert {
  resolve(): void;
  reject(error: Error): void;
}

/** A failure as the thread reported it (already redacted there), or of the thread itself. */
function threadFailure(message: string, code: string | undefined): DatabaseOperationError {
  return new DatabaseOperationError(message, code);
}

/**
 * Runs the ledger's inserts on a worker thread with a postgres-js connection of its own, so the request thread only
 * encodes a batch and posts it. Measured beside the same server inserting on the request thread (bench, production
 * shape with the master key, 1,000 requests a second): the driver's part of each batch (its buffers, the socket's
 * writes and reads, the protocol's two round trips, the promises) held the loop in bursts that put +1.0 ms on the p99,
 * while encoding the batch alone cost +0.07 ms.
 *
 * The thread starts with the first batch and is started again after it dies (every insert in flight then fails,
 * and the usage queue retries it, so nothing is lost). It is referenced only while an insert waits, so it never keeps
 * an idle process alive. `close()` lets the inserts already sent finish and closes the connection; past
 * `closeTimeoutMs` it terminates the thread, failing what is left (the queue spills it).
 *
 * @example
 * ```ts
 * const thread = openPostgresUsageThread({ url, threadFile, statement: usageInsertStatement });
 * await thread.insert(batchJson);
 * await thread.close();
 * ```
 */
export function openPostgresUsageThread(options: PostgresUsageThreadOptions): PostgresUsageWriter {
  const settings: UsageThreadSettings = {
    url: options.url,
    statement: options.statement,
    niceness: options.niceness ?? 10,
  };
  const closeTimeoutMs = options.closeTimeoutMs ?? 5_000;
  const pending = new Map<number, PendingInsert>();
  let nextId = 1;
  let thread: Worker | undefined;
  let closing: Promise<void> | undefined;

  const settle = (answer: UsageThreadAnswer) => {
    const call = pending.get(answer.id);
    if (call === undefined) return;
    pending.delete(answer.id);
    if (pending.size === 0) thread?.unref();
    if (answer.ok) call.resolve();
    else call.reject(threadFailure(answer.message, answer.code));
  };

  const start = (): Worker => {
    const started = new Worker(options.threadFile, { workerData: settings });
    options.onThread?.(started);
    let ended = false;
    const end = (reason: string) => {
      if (ended) return;
      ended = true;
      if (thread === started) thread = undefined;
      const error = threadFailure(`database unavailable: the usage thread ${reason}`, 'ECONNRESET');
      for (const call of pending.values()) call.reject(error);
      pending.clear();
    };
    started.on('message', settle);
    started.on('error', (error) => end(`failed: ${error.message}`));
    started.on('exit', (exitCode) => end(`ended (exit code ${exitCode})`));
    return started;
  };

  const post = (request: UsageThreadRequest, call: PendingInsert) => {
    thread ??= start();
    pending.set(request.id, call);
    thread.ref();
    thread.postMessage(request);
  };

  return {
    insert(batchJson) {
      return new Promise<void>((resolve, reject) => {
        if (closing !== undefined) {
          reject(threadFailure('database unavailable: the usage thread is closed', 'ECONNRESET'));
          return;
        }
        post({ id: nextId++, kind: 'insert', batchJson }, { resolve, reject });
      });
    },
    close() {
      closing ??= (async () => {
        const running = thread;
        if (running === undefined) return;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timedOut = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), closeTimeoutMs);
        });
        const closed = new Promise<'closed'>((resolve) => {
          const request: UsageThreadRequest = {
            id: nextId++,
            kind: 'close',
            timeoutSeconds: Math.max(1, Math.floor(closeTimeoutMs / 2_000)),
          };
          post(request, { resolve: () => resolve('closed'), reject: () => resolve('closed') });
        });
        const outcome = await Promise.race([closed, timedOut]);
        clearTimeout(timer);
        if (outcome === 'timeout') await running.terminate();
      })();
      return closing;
    },
  };
}
