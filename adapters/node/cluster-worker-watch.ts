import type { Worker } from 'node:cluster';

/** The IPC message a worker's event loop sends on every turn of its heartbeat timer. */
const heartbeatMessage = { type: 'torii:heartbeat' } as const;

/** How often a worker sends its heartbeat for a given miss bound: five chances per bound, at most once a second. */
export function heartbeatIntervalMs(heartbeatTimeoutMs: number): number {
  return Math.max(50, Math.min(1_000, Math.floor(heartbeatTimeoutMs / 5)));
}

/**
 * Worker side: sends a heartbeat to the primary every `intervalMs` from this process's main event loop, so a loop
 * that stops turning (a spin, a synchronous wedge) stops the heartbeats. The timer is unref'd.
 *
 * @example
 * startWorkerHeartbeat(heartbeatIntervalMs(settings.workerHeartbeatTimeoutMs));
 */
export function startWorkerHeartbeat(intervalMs: number): () => void {
  const send = (): void => {
    if (process.send !== undefined && process.connected) process.send(heartbeatMessage);
  };
  send();
  const timer = setInterval(send, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Why a worker was given up on. */
export type WorkerMissKind = 'heartbeat' | 'start';

/** What {@link createWorkerWatch} is made with. */
export interface WorkerWatchOptions {
  /** A listening worker whose last heartbeat is older than this is wedged, ms. */
  heartbeatTimeoutMs: number;
  /** A new worker that has not started listening after this long is wedged too, ms (start-up may be slow). */
  startTimeoutMs: number;
  /** Called once per wedged worker; the caller logs, counts and kills it. */
  onMiss(worker: Worker, kind: WorkerMissKind, silentMs: number): void;
  /** Monotonic clock, ms (default `performance.now`). */
  now?: () => number;
}

/** The primary's watch over its workers' heartbeats. */
export interface WorkerWatch {
  /** Starts watching a newly forked worker (until it exits). */
  watch(worker: Worker): void;
  /** Looks at every worker now (the timer does it on its own). */
  check(): void;
  stop(): void;
}

interface Watched {
  worker: Worker;
  startedAt: number;
  lastSeen: number;
  listening: boolean;
  missed: boolean;
}

/**
 * Primary side: notices a worker whose event loop has not turned for `heartbeatTimeoutMs` (no heartbeat over IPC), or
 * that did not start listening within `startTimeoutMs`, and reports it once through `onMiss`. When the primary's own
 * loop was held up longer than half the bound, nobody is blamed: the heartbeats may be waiting in its IPC pipe.
 *
 * @example
 * const watch = createWorkerWatch({ heartbeatTimeoutMs: 10_000, startTimeoutMs: 60_000, onMiss: (worker) => worker.process.kill('SIGKILL') });
 * watch.watch(cluster.fork());
 */
export function createWorkerWatch(options: WorkerWatchOptions): WorkerWatch {
  const now = options.now ?? (() => performance.now());
  const watched = new Map<number, Watched>();
  const checkEveryMs = Math.max(25, Math.min(500, Math.floor(options.heartbeatTimeoutMs / 4)));
  let lastCheck = now();

  const check = (): void => {
    const at = now();
    const held = at - lastCheck > Math.max(options.heartbeatTimeoutMs / 2, 4 * checkEveryMs);
    lastCheck = at;
    for (const entry of watched.values()) {
      if (held) {
        // This loop stood still: the workers' heartbeats are queued behind it, not missing.
        entry.lastSeen = at;
        continue;
      }
      if (entry.missed) continue;
      if (!entry.listening && at - entry.startedAt > options.startTimeoutMs) {
        entry.missed = true;
        options.onMiss(entry.worker, 'start', at - entry.startedAt);
      } else if (entry.listening && at - entry.lastSeen > options.heartbeatTimeoutMs) {
        entry.missed = true;
        options.onMiss(entry.worker, 'heartbeat', at - entry.lastSeen);
      }
    }
  };
  const timer = setInterval(check, checkEveryMs);
  timer.unref();

  return {
    watch(worker) {
      const at = now();
      const entry: Watched = { worker, startedAt: at, lastSeen: at, listening: false, missed: false };
      watched.set(worker.id, entry);
      worker.on('message', (message: unknown) => {
        if ((message as { type?: unknown } | null)?.type === heartbeatMessage.type) entry.lastSeen = now();
      });
      worker.once('listening', () => {
        entry.listening = true;
        entry.lastSeen = now();
      });
      worker.once('exit', () => watched.delete(worker.id));
    },
    check,
    stop: () => clearInterval(timer),
  };
}
