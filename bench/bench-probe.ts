/**
 * Preloaded into a process under test (`node --import ./bench/bench-probe.ts dist/server.js`) by `pnpm bench:profile`:
 * the first SIGUSR2 starts V8's CPU profiler (the same sampler as `node --cpu-prof`, 100 us interval) and an
 * event-loop delay monitor; the second stops both and writes `<BENCH_PROBE_DIRECTORY>/<pid>.cpuprofile` and
 * `<pid>.eventloop.json` (the longest delay of every second, and percentiles over the window), then
 * `<pid>.done`; with `BENCH_PROBE_ALLOCATIONS=1` it also samples allocations into `<pid>.heapprofile`. Only the main thread of the process listens; it adds nothing until signalled.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { constants as performanceConstants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';

type IntervalHistogram = ReturnType<typeof monitorEventLoopDelay>;
import { isMainThread } from 'node:worker_threads';

/** What `<pid>.eventloop.json` holds (milliseconds). */
export interface ProbeEventLoopReport {
  seconds: number;
  /** The longest event-loop delay seen in each second of the window. */
  maxPerSecond: number[];
  p50: number;
  p99: number;
  max: number;
  /** Garbage collections in the window, per kind: how many and their pause in ms (sum and longest). */
  garbageCollections: Record<string, { count: number; totalMs: number; maxMs: number }>;
  /** V8 heap in use at the start and the end of the window, in MB. */
  heapUsedMb: { start: number; end: number };
}

/** V8's garbage-collection kinds as `PerformanceObserver` reports them. */
const garbageCollectionKinds: Record<number, string> = {
  [performanceConstants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [performanceConstants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [performanceConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
  [performanceConstants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};
const megabytes = (bytes: number): number => Math.round(bytes / 1e5) / 10;

const directory = process.env.BENCH_PROBE_DIRECTORY;
/** Also sample allocations (V8's sampling heap profiler, both collectors' objects included): `<pid>.heapprofile`. */
const sampleAllocations = process.env.BENCH_PROBE_ALLOCATIONS === '1';

if (isMainThread && directory !== undefined) {
  let running:
    | {
        session: Session;
        window: IntervalHistogram;
        second: IntervalHistogram;
        perSecond: number[];
        timer: NodeJS.Timeout;
        observer: PerformanceObserver;
        garbageCollections: ProbeEventLoopReport['garbageCollections'];
        heapUsedAtStart: number;
      }
    | undefined;
  const milliseconds = (nanoseconds: number): number => Math.round(nanoseconds / 1e4) / 100;

  const start = async (): Promise<void> => {
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
    if (sampleAllocations) {
      await session.post('HeapProfiler.enable');
      await session.post('HeapProfiler.startSampling', {
        samplingInterval: 4_096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
    }
    const window = monitorEventLoopDelay({ resolution: 1 });
    const second = monitorEventLoopDelay({ resolution: 1 });
    window.enable();
    second.enable();
    const perSecond: number[] = [];
    const timer = setInterval(() => {
      perSecond.push(milliseconds(second.max));
      second.reset();
    }, 1_000);
    timer.unref();
    const garbageCollections: ProbeEventLoopReport['garbageCollections'] = {};
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const { detail } = entry as PerformanceEntry & { detail?: { kind?: number } };
        const kind = garbageCollectionKinds[detail?.kind ?? -1] ?? 'other';
        const tally = (garbageCollections[kind] ??= { count: 0, totalMs: 0, maxMs: 0 });
        tally.count += 1;
        tally.totalMs += entry.duration;
        tally.maxMs = Math.max(tally.maxMs, entry.duration);
      }
    });
    observer.observe({ entryTypes: ['gc'] });
    const heapUsedAtStart = getHeapStatistics().used_heap_size;
    running = { session, window, second, perSecond, timer, observer, garbageCollections, heapUsedAtStart };
  };

  const stop = async (): Promise<void> => {
    if (running === undefined) return;
    const { session, window, second, perSecond, timer, observer, garbageCollections, heapUsedAtStart } = running;
    running = undefined;
    clearInterval(timer);
    observer.disconnect();
    for (const tally of Object.values(garbageCollections)) {
      tally.totalMs = Math.round(tally.totalMs * 100) / 100;
      tally.maxMs = Math.round(tally.maxMs * 100) / 100;
    }
    window.disable();
    second.disable();
    const { profile } = await session.post('Profiler.stop');
    if (sampleAllocations) {
      const { profile: allocations } = await session.post('HeapProfiler.stopSampling');
      writeFileSync(join(directory, `${process.pid}.heapprofile`), JSON.stringify(allocations));
    }
    session.disconnect();
    writeFileSync(join(directory, `${process.pid}.cpuprofile`), JSON.stringify(profile));
    const report: ProbeEventLoopReport = {
      seconds: perSecond.length,
      maxPerSecond: perSecond,
      p50: milliseconds(window.percentile(50)),
      p99: milliseconds(window.percentile(99)),
      max: milliseconds(window.max),
      garbageCollections,
      heapUsedMb: { start: megabytes(heapUsedAtStart), end: megabytes(getHeapStatistics().used_heap_size) },
    };
    writeFileSync(join(directory, `${process.pid}.eventloop.json`), JSON.stringify(report));
    writeFileSync(join(directory, `${process.pid}.done`), '');
  };

  process.on('SIGUSR2', () => {
    void (running === undefined ? start() : stop()).catch((error: unknown) =>
      process.stderr.write(`bench-probe: ${String(error)}\n`),
    );
  });
}
