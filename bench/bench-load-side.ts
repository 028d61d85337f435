import { setTimeout as sleep } from 'node:timers/promises';
import { processTree, readCpuTicks, readOtherProcessTicks, readProcessTicks, ticksPerSecond } from './bench-process.ts';
import type { LoadSideUsage } from './bench-report.ts';

/**
 * Samples CPU use over the middle of a wrk run, from 0.5 s after its start to 0.3 s before its end: both cores, wrk,
 * the mock, the target's process tree, and every process that is not part of the benchmark (everything this process
 * started, PostgreSQL and Redis included, is part of it).
 *
 * @example
 * const load = await sampleLoadSide({ wrkPid, seconds: 3, targetPid, mockPid, targetCpu: 0, loadCpu: 1 });
 */
export async function sampleLoadSide(options: {
  wrkPid: number;
  seconds: number;
  targetPid: number;
  mockPid: number;
  targetCpu: number;
  loadCpu: number;
}): Promise<LoadSideUsage> {
  const runMilliseconds = options.seconds * 1_000;
  const from = Math.min(500, runMilliseconds * 0.2);
  const to = runMilliseconds - Math.min(300, runMilliseconds * 0.1);
  await sleep(from);
  const targetPids = processTree(options.targetPid);
  const benchPids = new Set(processTree(process.pid));
  const snapshot = () => ({
    at: performance.now(),
    cpus: readCpuTicks([options.targetCpu, options.loadCpu]),
    wrk: readProcessTicks([options.wrkPid]),
    mock: readProcessTicks([options.mockPid]),
    target: readProcessTicks(targetPids),
    other: readOtherProcessTicks(benchPids),
  });
  const first = snapshot();
  await sleep(to - from);
  const last = snapshot();
  const wallTicks = ((last.at - first.at) / 1_000) * ticksPerSecond;
  const processPercent = (before: number, after: number): number =>
    wallTicks > 0 ? ((after - before) / wallTicks) * 100 : 0;
  const cpuPercent = (cpu: number): number => {
    const before = first.cpus.get(cpu);
    const after = last.cpus.get(cpu);
    if (before === undefined || after === undefined || after.total === before.total) return 0;
    return ((after.busy - before.busy) / (after.total - before.total)) * 100;
  };
  return {
    cpu0Percent: cpuPercent(options.targetCpu),
    cpu1Percent: cpuPercent(options.loadCpu),
    wrkPercent: processPercent(first.wrk, last.wrk),
    mockPercent: processPercent(first.mock, last.mock),
    targetPercent: processPercent(first.target, last.target),
    otherPercent: Math.max(0, processPercent(first.other, last.other)),
  };
}
