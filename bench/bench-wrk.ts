import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { logTail, spawnPinned, type ManagedProcess } from './bench-process.ts';

/**
 * Runs wrk (one thread, pinned to the load CPU) with `bench/wrk/openai-chat.lua` and parses the JSON line that the
 * script's `done()` prints. wrk's own `-d` bounds the load; a kill timer bounds wrk itself.
 */

const scriptPath = fileURLToPath(new URL('./wrk/openai-chat.lua', import.meta.url));

/** What one wrk run measured. */
export interface WrkResult {
  requests: number;
  durationSeconds: number;
  requestsPerSecond: number;
  bytes: number;
  /** Non-2xx/3xx responses plus socket errors (connect, read, write, timeout). */
  errors: number;
  errorBreakdown: { connect: number; read: number; write: number; status: number; timeout: number };
  latencyMilliseconds: { mean: number; max: number; p50: number; p90: number; p99: number; p999: number };
}

/** The shape of the `BENCH_RESULT` line. */
interface WrkScriptOutput {
  requests: number;
  duration_us: number;
  bytes: number;
  errors: WrkResult['errorBreakdown'];
  latency_us: { mean: number; max: number; p50: number; p90: number; p99: number; p999: number };
}

/** Throws with an install hint unless a runnable `wrk` is on the PATH. */
export function assertWrkInstalled(): void {
  const probe = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  if (probe.error !== undefined) {
    throw new Error('wrk is not installed or not on the PATH: install it with `apt-get install wrk` (Debian/Ubuntu)');
  }
}

/** Parses wrk's stdout: the `BENCH_RESULT {json}` line printed by the Lua `done()`. */
export function parseWrkOutput(stdout: string): WrkResult {
  const line = stdout.split('\n').find((candidate) => candidate.startsWith('BENCH_RESULT '));
  if (line === undefined) throw new Error(`wrk printed no BENCH_RESULT line:\n${stdout.slice(-1_500)}`);
  const output = JSON.parse(line.slice('BENCH_RESULT '.length)) as WrkScriptOutput;
  const durationSeconds = output.duration_us / 1e6;
  const breakdown = output.errors;
  const milliseconds = (microseconds: number): number => microseconds / 1_000;
  return {
    requests: output.requests,
    durationSeconds,
    requestsPerSecond: durationSeconds > 0 ? output.requests / durationSeconds : 0,
    bytes: output.bytes,
    errors: breakdown.connect + breakdown.read + breakdown.write + breakdown.status + breakdown.timeout,
    errorBreakdown: breakdown,
    latencyMilliseconds: {
      mean: milliseconds(output.latency_us.mean),
      max: milliseconds(output.latency_us.max),
      p50: milliseconds(output.latency_us.p50),
      p90: milliseconds(output.latency_us.p90),
      p99: milliseconds(output.latency_us.p99),
      p999: milliseconds(output.latency_us.p999),
    },
  };
}

/**
 * Runs one wrk load and returns its result, plus whatever `during` (started right after the spawn with wrk's pid)
 * resolved to, such as CPU samples.
 *
 * @example
 * const { result } = await runWrk({ url: 'http://127.0.0.1:4000/v1/chat/completions', connections: 32,
 *   durationSeconds: 8, bodyFile: '/tmp/chat.json', cpu: 1, logPath: '/tmp/wrk.log' });
 */
export async function runWrk<T = undefined>(options: {
  url: string;
  connections: number;
  durationSeconds: number;
  bodyFile: string;
  authorization?: string;
  /** A file of virtual key secrets, one per line: each request carries one picked at random (replaces `authorization`). */
  keysFile?: string;
  /** Seed of the random key choice; give every run its own, or the runs repeat one sequence of keys. */
  seed?: number;
  /** Aggregate requests per second; omitted means as fast as the connections allow. */
  rate?: number;
  cpu: number;
  logPath: string;
  timeoutSeconds?: number;
  during?: (wrkPid: number) => Promise<T>;
}): Promise<{ result: WrkResult; during: T | undefined }> {
  const threads = 1;
  const wrk: ManagedProcess = spawnPinned({
    name: 'wrk',
    cpu: options.cpu,
    command: [
      'wrk',
      `-t${threads}`,
      `-c${options.connections}`,
      `-d${Math.max(1, Math.round(options.durationSeconds))}s`,
      `--timeout`,
      `${options.timeoutSeconds ?? 5}s`,
      '-s',
      scriptPath,
      options.url,
    ],
    environment: {
      BENCH_BODY_FILE: options.bodyFile,
      BENCH_AUTHORIZATION: options.authorization ?? '',
      BENCH_RATE: options.rate === undefined ? '' : String(options.rate),
      BENCH_THREADS: String(threads),
      BENCH_KEYS_FILE: options.keysFile ?? '',
      BENCH_SEED: options.seed === undefined ? '' : String(options.seed),
    },
    logPath: options.logPath,
  });
  const killAfterMilliseconds = (options.durationSeconds + (options.timeoutSeconds ?? 5) + 10) * 1_000;
  const killTimer = sleep(killAfterMilliseconds, undefined, { ref: false }).then(() => 'timeout' as const);
  const duringPromise = options.during?.(wrk.pid);
  const outcome = await Promise.race([wrk.exited, killTimer]);
  if (outcome === 'timeout') {
    try {
      process.kill(-wrk.pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
    throw new Error(`wrk did not finish within ${killAfterMilliseconds} ms; killed it`);
  }
  const during = await duringPromise;
  const output = logTail(wrk, 100_000);
  if (outcome.code !== 0) throw new Error(`wrk exited with code ${outcome.code}:\n${output.slice(-1_500)}`);
  return { result: parseWrkOutput(output), during };
}
