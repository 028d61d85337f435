/**
 * Preloaded into a process under test (`node --import ./bench/bench-probe.ts dist/server.js`) by `pnpm bench:profile`:
 * the first SIGUSR2 starts V8's CPU profiler (the same sampler as `node --cpu-prof`, 100 us interval) and an
 * event-loop delay monitor; the second stops both and writes `<BENCH_PROBE_DIRECTORY>/<pid>.cpuprofile` and
 * `<pid>.eventloop.json` (the longest delay of every second, and percentiles over the window), then
 * `<pid>.done`. Only the main thread of the process listens; it adds nothing until signalled.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

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
}

const directory = process.env.BENCH_PROBE_DIRECTORY;

if (isMainThread && directory !== undefined) {
  let running:
    | {
        session: Session;
        window: IntervalHistogram;
        second: IntervalHistogram;
        perSecond: number[];
        timer: NodeJS.Timeout;
      }
    | undefined;
  const milliseconds = (nanoseconds: number): number => Math.round(nanoseconds / 1e4) / 100;

  const start = async (): Promise<void> => {
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
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
    running = { session, window, second, perSecond, timer };
  };

  const stop = async (): Promise<void> => {
    if (running === undefined) return;
    const { session, window, second, perSecond, timer } = running;
    running = undefined;
    clearInterval(timer);
    window.disable();
    second.disable();
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    writeFileSync(join(directory, `${process.pid}.cpuprofile`), JSON.stringify(profile));
    const report: ProbeEventLoopReport = {
      seconds: perSecond.length,
      maxPerSecond: perSecond,
      p50: milliseconds(window.percentile(50)),
      p99: milliseconds(window.percentile(99)),
      max: milliseconds(window.max),
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
