import { Worker } from 'node:worker_threads';
import { consoleLogger } from '../../src/services.ts';

/** What {@link startProcessWatchdog} watches. Each check is off when its field is absent. */
export interface ProcessWatchdogOptions {
  /**
   * The pid of this process's parent (a cluster worker's primary). When the parent is gone (the process was re-parented,
   * e.g. because the primary was killed with SIGKILL and could run no code), this process is killed.
   */
  parentPid?: number;
  /**
   * Kill this process when its main event loop has not turned for this long, ms (the cluster primary and a single
   * process; a worker is watched by its primary instead). A loop that spins forever (PGlite after a disk-full panic,
   * a bug) then ends in a loud exit the supervisor restarts, instead of a silent hang.
   */
  stallTimeoutMs?: number;
  /** Written into the log line: `primary`, `worker`, `single`. */
  role: string;
  /** How often the watchdog thread looks, ms (default 250). */
  pollMs?: number;
}

/** A running watchdog. */
export interface ProcessWatchdog {
  stop(): Promise<void>;
}

/**
 * The watchdog thread's code. It runs on its own thread so it keeps running while the main thread spins; it reads the
 * main thread's heartbeat counter from shared memory, writes its one log line straight to stderr, and kills the whole
 * process (SIGKILL: nothing on the stuck main thread has to cooperate). Built-ins come through
 * `process.getBuiltinModule`, which works whether the thread's code is taken as CommonJS or as an ES module (it is an
 * ES module when the process runs with `--input-type=module`).
 */
const watchdogSource = `
const { workerData } = process.getBuiltinModule('node:worker_threads');
const { writeSync } = process.getBuiltinModule('node:fs');
const beats = new Int32Array(workerData.beats);
const { parentPid, stallTimeoutMs, pollMs, role } = workerData;
let seen = Atomics.load(beats, 0);
let seenAt = Date.now();
let lastPoll = Date.now();
const die = (fields) => {
  try {
    writeSync(2, JSON.stringify({ time: new Date().toISOString(), level: 'error', role, pid: process.pid, ...fields }) + '\\n');
  } finally {
    process.kill(process.pid, 'SIGKILL');
  }
};
setInterval(() => {
  const now = Date.now();
  // The whole machine stood still (suspend, a stopped container): start counting again rather than blame the loop.
  if (now - lastPoll > Math.max(5 * pollMs, 2000)) seenAt = now;
  lastPoll = now;
  if (parentPid !== undefined && process.ppid !== parentPid) {
    die({ message: 'the cluster primary is gone; this worker exits with it', parentPid, newParentPid: process.ppid });
  }
  if (stallTimeoutMs > 0) {
    const beat = Atomics.load(beats, 0);
    if (beat !== seen) {
      seen = beat;
      seenAt = now;
    } else if (now - seenAt > stallTimeoutMs) {
      die({ message: 'event loop stalled; killing the process rather than hang', stalledMs: now - seenAt, stallTimeoutMs });
    }
  }
}, pollMs);
`;

/**
 * Starts a small `node:worker_threads` thread that kills this process when its parent is gone or its main event loop
 * stopped turning (see {@link ProcessWatchdogOptions}). The main thread's share is one `Atomics.add` per beat
 * (every stall bound / 10, at most once a second); both timers are unref'd, so neither keeps the process alive.
 *
 * @example
 * startProcessWatchdog({ parentPid: process.ppid, role: 'worker' }); // in a cluster worker
 * startProcessWatchdog({ stallTimeoutMs: 30_000, role: 'primary' }); // in the cluster primary
 */
export function startProcessWatchdog(options: ProcessWatchdogOptions): ProcessWatchdog {
  const beats = new Int32Array(new SharedArrayBuffer(4));
  const stallTimeoutMs = options.stallTimeoutMs ?? 0;
  const pollMs = options.pollMs ?? 250;
  const beat =
    stallTimeoutMs > 0
      ? setInterval(() => Atomics.add(beats, 0, 1), Math.max(50, Math.min(1_000, Math.floor(stallTimeoutMs / 10))))
      : undefined;
  beat?.unref();
  const thread = new Worker(watchdogSource, {
    eval: true,
    workerData: { beats: beats.buffer, parentPid: options.parentPid, stallTimeoutMs, pollMs, role: options.role },
    // The thread needs next to nothing; keep its heap small.
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
    stdout: false,
    stderr: false,
  });
  thread.unref();
  // A watchdog that cannot run must not take the process down with it.
  thread.on('error', (error: Error) => consoleLogger.error('process watchdog failed', { error: error.message }));
  return {
    async stop() {
      if (beat !== undefined) clearInterval(beat);
      await thread.terminate();
    },
  };
}
