import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { logTail, spawnPinned } from './bench-process.ts';

/**
 * The second load generator of the cross-check: `hey` (Debian's 0.1.4, written in Go), pinned to the load CPU, at a
 * fixed rate (`-q` is per worker, so the rate is connections x q), its summary parsed. hey prints latencies in seconds
 * with four decimals, so its p50 and p99 have a resolution of 0.1 ms.
 */

/** What one hey run measured. */
export interface HeyResult {
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Non-2xx responses plus the requests in hey's error distribution. */
  errors: number;
}

/** Whether a runnable `hey` is on the PATH. */
export function heyInstalled(): boolean {
  return spawnSync('hey', ['-n', '1', '-c', '1', 'http://127.0.0.1:1/'], { encoding: 'utf8' }).error === undefined;
}

/**
 * Parses hey's summary: `Requests/sec`, the `Latency distribution` (its 50% and 99% lines), the `Status code
 * distribution` and the `Error distribution`.
 *
 * @example
 * parseHeyOutput(stdout); // { requests: 10000, requestsPerSecond: 999.9, p50Ms: 0.4, p99Ms: 1.1, errors: 0 }
 */
export function parseHeyOutput(stdout: string): HeyResult {
  const requestsPerSecond = Number(/Requests\/sec:\s*([\d.]+)/.exec(stdout)?.[1] ?? Number.NaN);
  const quantile = (percent: number): number => {
    const match = new RegExp(`^\\s*${percent}% in ([\\d.]+) secs`, 'm').exec(stdout);
    return match === null ? Number.NaN : Number(match[1]) * 1_000;
  };
  let requests = 0;
  let errors = 0;
  const statusSection = /Status code distribution:\n([\s\S]*?)(?:\n\s*\n|$)/.exec(stdout)?.[1] ?? '';
  for (const match of statusSection.matchAll(/\[(\d+)\]\s+(\d+) responses/g)) {
    const count = Number(match[2]);
    requests += count;
    if (!match[1]!.startsWith('2')) errors += count;
  }
  const errorSection = /Error distribution:\n([\s\S]*?)(?:\n\s*\n|$)/.exec(stdout)?.[1] ?? '';
  for (const match of errorSection.matchAll(/^\s*\[(\d+)\]/gm)) errors += Number(match[1]);
  if (Number.isNaN(requestsPerSecond) || Number.isNaN(quantile(50)) || Number.isNaN(quantile(99))) {
    throw new Error(`hey printed no latency distribution:\n${stdout.slice(-1_500)}`);
  }
  return { requests, requestsPerSecond, p50Ms: quantile(50), p99Ms: quantile(99), errors };
}

/**
 * Runs `hey -z <seconds>s -c <connections> -q <rate / connections> -m POST -T application/json -D <body>` pinned to
 * `cpu`, and parses its summary.
 *
 * @example
 * await runHey({ url, connections: 20, rate: 1_000, seconds: 10, bodyFile, authorization, cpu: 1, logPath });
 */
export async function runHey(options: {
  url: string;
  connections: number;
  rate: number;
  seconds: number;
  bodyFile: string;
  authorization: string;
  cpu: number;
  logPath: string;
}): Promise<HeyResult> {
  const perWorker = Math.max(1, Math.round(options.rate / options.connections));
  const hey = spawnPinned({
    name: 'hey',
    cpu: options.cpu,
    command: [
      'hey',
      '-z',
      `${Math.max(1, Math.round(options.seconds))}s`,
      '-c',
      String(options.connections),
      '-q',
      String(perWorker),
      '-m',
      'POST',
      '-T',
      'application/json',
      '-D',
      options.bodyFile,
      '-H',
      `Authorization: ${options.authorization}`,
      options.url,
    ],
    logPath: options.logPath,
  });
  const killAfterMilliseconds = (options.seconds + 30) * 1_000;
  const timeout = sleep(killAfterMilliseconds, undefined, { ref: false }).then(() => 'timeout' as const);
  const outcome = await Promise.race([hey.exited, timeout]);
  if (outcome === 'timeout') {
    try {
      process.kill(-hey.pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
    throw new Error(`hey did not finish within ${killAfterMilliseconds} ms; killed it`);
  }
  const output = logTail(hey, 100_000);
  if (outcome.code !== 0) throw new Error(`hey exited with code ${outcome.code}:\n${output.slice(-1_500)}`);
  return parseHeyOutput(output);
}
