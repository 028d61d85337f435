import { Worker } from 'node:worker_threads';
import { createSqliteEngine, type SqliteFailure } from './sqlite-engine.ts';
import { lowerThreadPriority } from './thread-priority.ts';
import { closedSqliteError, SqliteError, type SqliteExecutor, type SqliteExecutorFactory } from './sqlite-executor.ts';

/** A request to the thread. */
interface ThreadRequest {
  id: number;
  kind: 'execute' | 'batch' | 'migrate' | 'close';
  payload?: unknown;
}

/** What the thread posts: an answer to a request, or (id 0) whether the database opened. */
type ThreadAnswer = { id: number; ok: true; result: unknown } | { id: number; ok: false; failure: SqliteFailure };

/**
 * The thread's program. Self-contained like the engine (it runs as source text): opens the engine from `workerData`,
 * answers `ready` (id 0), then runs each request in the order it arrives and answers it; `close` closes the database
 * and lets the thread end.
 */
function sqliteThreadMain(engineFactory: typeof createSqliteEngine, lowerPriority: typeof lowerThreadPriority): void {
  const { parentPort, workerData } = process.getBuiltinModule('node:worker_threads');
  const { DatabaseSync } = process.getBuiltinModule('node:sqlite');
  const port = parentPort!;
  const { path, settings, niceness } = workerData as {
    path: string;
    settings: Parameters<typeof engineFactory>[2];
    niceness: number;
  };
  lowerPriority(niceness);
  const failureOf = (error: unknown) => {
    const { message } = (error ?? {}) as { message?: unknown };
    return { message: typeof message === 'string' ? message : String(error), code: 'SQLITE_CANTOPEN' };
  };
  let engine: ReturnType<typeof engineFactory>;
  try {
    engine = engineFactory(DatabaseSync as never, path, settings);
  } catch (error) {
    port.postMessage({ id: 0, ok: false, failure: failureOf(error) });
    return;
  }
  port.postMessage({ id: 0, ok: true, result: null });
  port.on('message', (request: ThreadRequest) => {
    try {
      let result: unknown = null;
      if (request.kind === 'execute') result = engine.execute(request.payload as never);
      else if (request.kind === 'batch') result = engine.batch(request.payload as never);
      else if (request.kind === 'migrate') result = engine.migrate(request.payload as never);
      else if (request.kind === 'close') engine.close();
      else throw new Error(`unknown request ${String(request.kind)}`);
      port.postMessage({ id: request.id, ok: true, result });
      if (request.kind === 'close') port.close();
    } catch (error) {
      port.postMessage({ id: request.id, ok: false, failure: engine.describeFailure(error) });
    }
  });
}

/** The worker's source: the engine's, the priority helper's and the program's text, joined. */
const threadSource = `'use strict';\nconst createSqliteEngine = ${createSqliteEngine.toString()};\nconst lowerThreadPriority = ${lowerThreadPriority.toString()};\n(${sqliteThreadMain.toString()})(createSqliteEngine, lowerThreadPriority);\n`;

/** Options of {@link openSqliteWorkerThreadExecutor}. */
export interface SqliteWorkerThreadOptions {
  /** How long `close()` waits for the thread to finish the calls before it and close the file, ms (default 5,000). */
  closeTimeoutMs?: number;
  /** Called with the thread once it is started (for tests, and for anyone who wants its resource usage). */
  onThread?: (thread: Worker) => void;
  /**
   * How much lower than the rest of the process the thread runs on Linux, in nice steps (default 10; 0 leaves it
   * alone). Sharing one busy core (one worker per core, or a single process on a small VM), the request thread then
   * preempts the thread's inserts instead of waiting out their time slice, and the thread still gets about a tenth of
   * the core while the request thread is saturated: the ledger catches up when the load eases, and the usage queue's
   * memory bound and disk spill cover the time until then. A key looked up in the database (a cache miss) waits for
   * the thread too, so under saturation such a lookup takes longer; warm keys never reach it.
   */
  niceness?: number;
}

/**
 * Opens the SQLite database at `path` on a worker thread of its own and answers an executor whose calls post
 * `{ sql, params, method }` messages to it: `node:sqlite` is synchronous, and this keeps its statements (and its
 * waits on another process's lock, up to `busy_timeout`) off the thread that serves requests. The thread runs one
 * call at a time, in order, so a batch or a migration is never interleaved with other statements.
 *
 * The thread is `unref`ed while no call is waiting: it never keeps an idle process alive. A failing statement rejects its call with a
 * {@link SqliteError} carrying SQLite's message and code; a thread that dies (or is terminated) rejects every pending
 * call, and later calls reject at once. `close()` asks the thread to checkpoint and close the file after the calls
 * already sent; past `closeTimeoutMs` it rejects what is still pending and terminates the thread.
 *
 * @example
 * ```ts
 * const executor = await openSqliteWorkerThreadExecutor('/var/lib/torii/torii.sqlite', defaultSqliteEngineSettings);
 * const { rows } = await executor.execute({ sql: 'select count(*) from usage_events', params: [], method: 'get' });
 * await executor.close();
 * ```
 */
export function openSqliteWorkerThreadExecutor(options: SqliteWorkerThreadOptions = {}): SqliteExecutorFactory {
  const closeTimeoutMs = options.closeTimeoutMs ?? 5_000;
  const niceness = options.niceness ?? 10;
  return (path, settings) =>
    new Promise<SqliteExecutor>((resolveOpen, rejectOpen) => {
      const worker = new Worker(threadSource, { eval: true, workerData: { path, settings, niceness } });
      options.onThread?.(worker);
      const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
      let nextId = 1;
      let ended: Error | undefined;
      let opened = false;
      /** Set once `close()` is sent: later calls reject at once. */
      let refusing = false;

      // Referenced while opening and while a call waits for its answer (like a socket with a request in flight), so
      // a script awaiting a statement is not cut short; unreferenced when idle, so it never keeps the process alive.
      // (After the listeners: adding a 'message' listener references the worker again.)
      const settle = () => {
        if (opened && pending.size === 0) worker.unref();
      };
      const end = (error: Error) => {
        if (ended !== undefined) return;
        ended = error;
        for (const call of pending.values()) call.reject(error);
        pending.clear();
        worker.unref();
        if (!opened) rejectOpen(error);
      };
      worker.on('message', (answer: ThreadAnswer) => {
        if (answer.id === 0) {
          if (answer.ok) {
            opened = true;
            settle();
            resolveOpen(executor);
          } else {
            end(new SqliteError(answer.failure));
            void worker.terminate();
          }
          return;
        }
        const call = pending.get(answer.id);
        if (call === undefined) return;
        pending.delete(answer.id);
        settle();
        if (answer.ok) call.resolve(answer.result);
        else call.reject(new SqliteError(answer.failure));
      });
      worker.on('error', (error) =>
        end(new SqliteError({ message: `the SQLite thread failed: ${error.message}`, code: 'SQLITE_ABORT' })),
      );
      worker.on('exit', (exitCode) =>
        end(
          ended ??
            new SqliteError({ message: `the SQLite thread ended (exit code ${exitCode})`, code: 'SQLITE_ABORT' }),
        ),
      );

      const call = <Result>(kind: ThreadRequest['kind'], payload?: unknown): Promise<Result> =>
        new Promise<Result>((resolve, reject) => {
          if (ended !== undefined || (refusing && kind !== 'close')) {
            reject(ended ?? closedSqliteError());
            return;
          }
          const id = nextId++;
          pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
          worker.ref();
          try {
            worker.postMessage({ id, kind, payload } satisfies ThreadRequest);
          } catch (error) {
            // A parameter the structured clone cannot copy (a function, a symbol): this call fails, the thread lives.
            pending.delete(id);
            settle();
            reject(new SqliteError({ message: `cannot send the statement: ${String(error)}`, code: 'SQLITE_MISUSE' }));
          }
        });

      let closing: Promise<void> | undefined;
      const executor: SqliteExecutor = {
        execute: (statement) => call('execute', statement),
        batch: (statements) => call('batch', statements),
        migrate: (migrations) => call('migrate', migrations),
        close() {
          closing ??= (async () => {
            if (ended !== undefined) return;
            let timer: ReturnType<typeof setTimeout> | undefined;
            const timedOut = new Promise<'timeout'>((resolve) => {
              timer = setTimeout(() => resolve('timeout'), closeTimeoutMs);
            });
            const closed = call<void>('close').then(
              () => 'closed' as const,
              () => 'closed' as const,
            );
            // No more calls from here on; the ones already sent run first.
            refusing = true;
            const outcome = await Promise.race([closed, timedOut]);
            clearTimeout(timer);
            end(closedSqliteError());
            if (outcome === 'timeout') void worker.terminate();
          })();
          return closing;
        },
      };
    });
}
