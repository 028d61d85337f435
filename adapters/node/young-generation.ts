import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { StartupError } from '../shared/startup-error.ts';

/** V8's flags that size the young generation; an operator who set one keeps V8 to it. */
const youngGenerationFlag = /(^|\s)--(max-semi-space-size|min-semi-space-size|semi-space-growth-factor)(=|\s|$)/;

/** The semi-space cap of a server process when `TORII_SEMI_SPACE_MB` is unset, in MB. */
export const defaultSemiSpaceMegabytes = 4;

/** The largest cap `TORII_SEMI_SPACE_MB` takes (V8's own ceiling on 64-bit hosts is 32 MB per semi-space). */
const largestSemiSpaceMegabytes = 64;

/**
 * The semi-space cap, in MB, a server process should keep for `TORII_SEMI_SPACE_MB` (a whole number, 0 to 64, default
 * {@link defaultSemiSpaceMegabytes}; anything else is a start-up error naming it), or undefined for 0 (V8's own
 * sizing) or when the operator set one of V8's young-generation flags in `NODE_OPTIONS` or on the command line.
 *
 * Why: V8 grows the young generation while objects survive its scavenges, doubling each semi-space up to 32 MB, and a
 * scavenge's pause grows with it. A gateway keeps a steady trickle of objects alive for a second or so (requests in
 * flight, usage events waiting for their batch), so under load V8 grows it to the top, and measured on one pinned core
 * at 1,000 requests a second a scavenge then took 3.8 ms on average, 14 of 102 over 8 ms, once every ~0.5 s: the
 * production shape's whole p99. Kept at 4 MB: 1.1 ms on average, none over 8 ms, five times as many scavenges and
 * about 0.3% more CPU in all.
 *
 * @example
 * const megabytes = semiSpaceCap({ TORII_SEMI_SPACE_MB: '8' }, process.execArgv);
 * // megabytes === 8
 */
export function semiSpaceCap(
  environment: Readonly<Record<string, string | undefined>>,
  execArgv: readonly string[],
): number | undefined {
  if (execArgv.some((argument) => youngGenerationFlag.test(argument))) return undefined;
  if (youngGenerationFlag.test(environment.NODE_OPTIONS ?? '')) return undefined;
  const configured = environment.TORII_SEMI_SPACE_MB?.trim();
  if (configured === undefined || configured === '') return defaultSemiSpaceMegabytes;
  const megabytes = /^\d+$/.test(configured) ? Number(configured) : Number.NaN;
  if (!Number.isInteger(megabytes) || megabytes > largestSemiSpaceMegabytes) {
    throw new StartupError(
      'TORII_SEMI_SPACE_MB',
      `must be a whole number of MB from 0 (V8's own sizing) to ${largestSemiSpaceMegabytes}, not "${configured}"`,
    );
  }
  return megabytes === 0 ? undefined : megabytes;
}

/** What {@link capYoungGeneration} reads and sets in V8 (the process's own unless a test says otherwise). */
export interface YoungGenerationControls {
  /** The young generation's size now, both semi-spaces, in bytes. */
  newSpaceBytes(): number;
  /** Sets V8's `--semi-space-growth-factor` (read each time V8 decides to grow the young generation). */
  setGrowthFactor(factor: number): void;
}

const processControls: YoungGenerationControls = {
  newSpaceBytes: () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0,
  setGrowthFactor: (factor) => setFlagsFromString(`--semi-space-growth-factor=${factor}`),
};

/**
 * Keeps this process's young generation at about `megabytes` per semi-space. V8 fixes `--max-semi-space-size` when
 * the process starts, so it cannot be set from inside; its growth factor, though, is read at every growth. After each
 * collection this looks at the young generation's size and lets V8 double it (factor 2) while it is under the cap and
 * not at all (factor 1) once it reached it. V8 starts at 0.5 MB per semi-space and doubles, so a power of two is met
 * exactly; V8 may still shrink it when the process idles, and it grows back to the cap under load. Returns a function
 * that stops watching (the size reached stays).
 *
 * @example
 * const megabytes = semiSpaceCap(process.env, process.execArgv);
 * if (megabytes !== undefined) capYoungGeneration(megabytes);
 */
export function capYoungGeneration(megabytes: number, controls: YoungGenerationControls = processControls): () => void {
  const capBytes = 2 * megabytes * 1024 * 1024;
  let factor = 0;
  const check = (): void => {
    const wanted = controls.newSpaceBytes() >= capBytes ? 1 : 2;
    if (wanted === factor) return;
    controls.setGrowthFactor(wanted);
    factor = wanted;
  };
  check();
  const observer = new PerformanceObserver(check);
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}

/** V8's flags that choose how many threads a scavenge uses; an operator who set one keeps V8 to it. */
const scavengeThreadsFlag = /(^|\s)--(no-)?(parallel-scavenge|single-threaded-gc|single-threaded)(=|\s|$)/;

/**
 * Whether this process should scavenge on its main thread alone: when it has no more than one CPU to itself (`cpus`,
 * the CPUs it may run on, at most `processes`, the server processes sharing them: a worker per CPU by default), and
 * unless the operator set one of V8's flags for it (`--parallel-scavenge`, `--single-threaded-gc`, ...).
 *
 * Why: V8 splits a scavenge into tasks for its helper threads when the survivors are many, as the production shape's
 * are (requests in flight, the ledger's queued events). With one CPU those threads only take turns with the main thread
 * that waits for them; with a CPU per worker they take a neighbouring worker's. Measured on one pinned core at 1,000
 * requests a second (side by side, three 10-s rounds each, in three runs, the last with the flag set at run time as
 * here): the production shape's median scavenge 1.13 -> 0.93, 0.97 -> 0.82 and 1.24 -> 0.94 ms on one thread; the
 * lean shape's (few survivors, so V8 kept it on one thread anyway) 0.74 -> 0.73 ms.
 *
 * @example
 * if (scavengesOnOneThread(process.env, process.execArgv, availableParallelism(), settings.workers)) {
 *   scavengeOnOneThread();
 * }
 */
export function scavengesOnOneThread(
  environment: Readonly<Record<string, string | undefined>>,
  execArgv: readonly string[],
  cpus: number,
  processes: number,
): boolean {
  if (execArgv.some((argument) => scavengeThreadsFlag.test(argument))) return false;
  if (scavengeThreadsFlag.test(environment.NODE_OPTIONS ?? '')) return false;
  return cpus <= processes;
}

/**
 * Makes V8 run this process's scavenges on the main thread alone (`--no-parallel-scavenge`, which V8 reads at every
 * scavenge, so it takes effect after start). Marking and compaction keep their helper threads.
 *
 * @example
 * scavengeOnOneThread();
 */
export function scavengeOnOneThread(setFlags: (flags: string) => void = setFlagsFromString): void {
  setFlags('--no-parallel-scavenge');
}
