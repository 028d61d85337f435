import { build } from 'esbuild';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Child processes of the benchmark: spawned pinned to one CPU, each in its own process group so it can be ended with
 * everything it forked; cold start measured from exec to the first 200; peak RSS and CPU time read from /proc for the
 * whole process tree (the gateway may be a cluster primary plus workers). Every process started here is registered
 * and killed when the benchmark exits, fails or is interrupted, so no load or server outlives it.
 */

/** A process the benchmark started and owns. */
export interface ManagedProcess {
  name: string;
  pid: number;
  child: ChildProcess;
  logPath: string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  hasExited: () => boolean;
}

const liveProcesses = new Set<ManagedProcess>();
let cleanupInstalled = false;
const exitHooks: Array<() => void> = [];

/** Sends `signal` to the process group a managed process leads, ignoring processes that are already gone. */
function signalGroup(managed: ManagedProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-managed.pid, signal);
  } catch {
    // Already exited.
  }
}

/**
 * Kills every live managed process (and its group) at once. Synchronous, so it also works from `process.on('exit')`.
 */
export function killAllManagedProcesses(): void {
  for (const managed of liveProcesses) signalGroup(managed, 'SIGKILL');
  liveProcesses.clear();
}

/**
 * Installs the exit, signal and crash handlers that kill every managed process; `onExit` hooks (such as removing the
 * temp directory) run after that. Idempotent.
 */
export function installCleanup(onExit?: () => void): void {
  if (onExit !== undefined) exitHooks.push(onExit);
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  const cleanup = (): void => {
    killAllManagedProcesses();
    for (const hook of exitHooks.splice(0)) {
      try {
        hook();
      } catch {
        // Best effort on the way out.
      }
    }
  };
  process.on('exit', cleanup);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping every child process\n`);
      cleanup();
      process.exit(130);
    });
  }
  process.on('uncaughtException', (error) => {
    process.stderr.write(`bench: ${error.stack ?? String(error)}\n`);
    cleanup();
    process.exit(1);
  });
}

/**
 * Spawns `command` pinned to `cpu` with `taskset` (which execs, so the pid is the command's own), in a new process
 * group, with stdout and stderr appended to `logPath`.
 *
 * @example
 * const mock = spawnPinned({ name: 'mock', cpu: 1, command: ['node', 'bench/bench-mock-upstream.ts'],
 *   environment: { PORT: '4000' }, logPath: '/tmp/mock.log' });
 */
export function spawnPinned(options: {
  name: string;
  cpu: number;
  command: string[];
  /** Added to this process's environment; a variable set to `undefined` is removed from it. */
  environment?: Record<string, string | undefined>;
  workingDirectory?: string;
  logPath: string;
}): ManagedProcess {
  const logDescriptor = openSync(options.logPath, 'a');
  const environment: Record<string, string | undefined> = { ...process.env, ...options.environment };
  for (const name of Object.keys(environment)) if (environment[name] === undefined) delete environment[name];
  const child = spawn('taskset', ['-c', String(options.cpu), ...options.command], {
    cwd: options.workingDirectory,
    env: environment,
    stdio: ['ignore', logDescriptor, logDescriptor],
    detached: true,
  });
  closeSync(logDescriptor);
  if (child.pid === undefined) throw new Error(`could not spawn ${options.name}: ${options.command.join(' ')}`);
  let exitedFlag = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      exitedFlag = true;
      liveProcesses.delete(managed);
      resolve({ code, signal });
    });
    child.on('error', () => {
      exitedFlag = true;
      liveProcesses.delete(managed);
      resolve({ code: null, signal: null });
    });
  });
  const managed: ManagedProcess = {
    name: options.name,
    pid: child.pid,
    child,
    logPath: options.logPath,
    exited,
    hasExited: () => exitedFlag,
  };
  liveProcesses.add(managed);
  return managed;
}

/**
 * Stops a managed process: `signal` to the leader only (so a cluster primary can drain its workers), then SIGKILL to
 * the whole group if it has not exited within `timeoutMs`. Reports whether it exited by itself and how long it took.
 */
export async function stopProcess(
  managed: ManagedProcess,
  options: { signal?: NodeJS.Signals; timeoutMs?: number } = {},
): Promise<{ graceful: boolean; milliseconds: number; code: number | null; signal: NodeJS.Signals | null }> {
  const started = performance.now();
  if (managed.hasExited()) return { graceful: true, milliseconds: 0, ...(await managed.exited) };
  try {
    process.kill(managed.pid, options.signal ?? 'SIGTERM');
  } catch {
    // Already gone.
  }
  const timeout = sleep(options.timeoutMs ?? 5_000, undefined, { ref: false }).then(() => 'timeout' as const);
  const outcome = await Promise.race([managed.exited, timeout]);
  if (outcome === 'timeout') {
    signalGroup(managed, 'SIGKILL');
    const result = await managed.exited;
    return { graceful: false, milliseconds: performance.now() - started, ...result };
  }
  // The leader is gone; make sure nothing it forked lingers.
  signalGroup(managed, 'SIGKILL');
  return { graceful: true, milliseconds: performance.now() - started, ...outcome };
}

/** The last `maximumBytes` of a process's log, for error messages. */
export function logTail(managed: ManagedProcess, maximumBytes = 2_000): string {
  try {
    const text = readFileSync(managed.logPath, 'utf8');
    return text.length > maximumBytes ? '...' + text.slice(-maximumBytes) : text;
  } catch {
    return '';
  }
}

/** Asks the kernel for a free loopback TCP port. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('could not allocate a port');
  return address.port;
}

/** One plain HTTP exchange without keep-alive; resolves with the status and body, rejects on socket errors. */
export function httpExchange(options: {
  port: number;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port: options.port,
        method: options.method,
        path: options.path,
        headers:
          options.body === undefined ? options.headers : { ...options.headers, 'content-type': 'application/json' },
        agent: false,
        timeout: options.timeoutMs ?? 2_000,
      },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(parts).toString() }));
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error('timeout')));
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

/** How long a target took from exec to serving. */
export interface ColdStart {
  /** Exec to the first 200 on `GET /health/ready`. */
  readySeconds: number;
  /** Exec to the first 200 on a chat request (sent as soon as ready answered 200). The reported cold start. */
  firstChatSeconds: number;
}

/**
 * Polls a just-spawned target until `GET /health/ready` and then a chat request answer 200, measuring from
 * `spawnedAt` (a `performance.now()` taken right before the spawn). Fails early if the process exits, and after
 * `timeoutMs` with the last status or error seen.
 */
export async function waitForFirst200(options: {
  managed: ManagedProcess;
  spawnedAt: number;
  port: number;
  chatBody: string;
  authorization: string;
  timeoutMs?: number;
}): Promise<ColdStart> {
  const deadline = options.spawnedAt + (options.timeoutMs ?? 30_000);
  let lastProblem = 'no answer yet';
  const poll = async (method: string, path: string, body?: string): Promise<number> => {
    while (performance.now() < deadline) {
      if (options.managed.hasExited()) {
        const { code, signal } = await options.managed.exited;
        throw new Error(`${options.managed.name} exited during startup (code ${code}, signal ${signal})`);
      }
      try {
        const answer = await httpExchange({
          port: options.port,
          method,
          path,
          headers: { authorization: options.authorization },
          ...(body === undefined ? {} : { body }),
        });
        if (answer.status === 200) return performance.now();
        lastProblem = `${method} ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`;
      } catch (error) {
        lastProblem = `${method} ${path}: ${(error as Error).message}`;
      }
      await sleep(5);
    }
    throw new Error(
      `${options.managed.name} did not answer 200 within ${options.timeoutMs ?? 30_000} ms (${lastProblem})`,
    );
  };
  const readyAt = await poll('GET', '/health/ready');
  const firstChatAt = await poll('POST', '/v1/chat/completions', options.chatBody);
  return {
    readySeconds: (readyAt - options.spawnedAt) / 1_000,
    firstChatSeconds: (firstChatAt - options.spawnedAt) / 1_000,
  };
}

/**
 * Spawns a server pinned to a CPU (its log in `temporaryDirectory/<name>.log`) and waits for its first 200s
 * ({@link waitForFirst200}); if it never answers, stops it and throws with the tail of its log.
 */
export async function startPinnedServer(options: {
  name: string;
  cpu: number;
  command: string[];
  environment: Record<string, string | undefined>;
  workingDirectory: string;
  temporaryDirectory: string;
  port: number;
  chatBody: string;
  authorization: string;
}): Promise<{ managed: ManagedProcess; coldStart: ColdStart }> {
  const spawnedAt = performance.now();
  const managed = spawnPinned({
    name: options.name,
    cpu: options.cpu,
    command: options.command,
    environment: options.environment,
    workingDirectory: options.workingDirectory,
    logPath: join(options.temporaryDirectory, `${options.name}.log`),
  });
  try {
    const coldStart = await waitForFirst200({
      managed,
      spawnedAt,
      port: options.port,
      chatBody: options.chatBody,
      authorization: options.authorization,
    });
    return { managed, coldStart };
  } catch (error) {
    await stopProcess(managed, { timeoutMs: 2_000 });
    const tail = logTail(managed);
    throw new Error(`${(error as Error).message}${tail === '' ? '' : `\n--- ${options.name} log tail ---\n${tail}`}`, {
      cause: error,
    });
  }
}

/** The pid and every descendant of it, from /proc/<pid>/task/<tid>/children. */
export function processTree(rootPid: number): number[] {
  const tree: number[] = [];
  const pending = [rootPid];
  while (pending.length > 0) {
    const pid = pending.pop()!;
    tree.push(pid);
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
        if (children !== '') pending.push(...children.split(/\s+/).map(Number));
      } catch {
        // The task ended meanwhile.
      }
    }
  }
  return tree;
}

/** Resets the kernel's peak-RSS mark (VmHWM) of each pid (`echo 5 > /proc/<pid>/clear_refs`); best effort. */
export function resetPeakRss(pids: number[]): void {
  for (const pid of pids) {
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
    } catch {
      // Not permitted or gone: the mark then covers the process's whole life, still a valid peak.
    }
  }
}

/** The sum over pids of each process's peak RSS (VmHWM) in bytes; processes that are gone count 0. */
export function readPeakRssBytes(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (match?.[1] !== undefined) total += Number(match[1]) * 1_024;
    } catch {
      // Gone.
    }
  }
  return total;
}

/** CPU time (user + system) of the pids, in clock ticks (USER_HZ, 100 per second on Linux). */
export function readProcessTicks(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command name, which is in parentheses and may contain spaces; utime and stime are the
      // 14th and 15th fields of the whole line, so the 12th and 13th after the closing parenthesis.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone.
    }
  }
  return total;
}

/**
 * CPU time of a process tree in clock ticks: for each pid (all its threads) user + system time plus that of its
 * children it has reaped, so a worker that exited still counts through its parent.
 */
export function readTreeTicks(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // Gone.
    }
  }
  return total;
}

/** The sum over pids of each process's current RSS (VmRSS) in bytes; processes that are gone count 0. */
export function readRssBytes(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (match?.[1] !== undefined) total += Number(match[1]) * 1_024;
    } catch {
      // Gone.
    }
  }
  return total;
}

/**
 * CPU time (user + system, plus that of reaped children) of every process on the machine except `excludedPids`, in
 * clock ticks. The difference between two readings is what other work (other users of the machine, concurrent builds)
 * took while the benchmark ran; processes that started and ended between the readings without a surviving parent are
 * missed.
 */
export function readOtherProcessTicks(excludedPids: ReadonlySet<number>): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || excludedPids.has(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // Gone.
    }
  }
  return total;
}

/** Busy and total ticks of one CPU, from /proc/stat. */
export interface CpuTicks {
  busy: number;
  total: number;
  /** Ticks the hypervisor ran another guest while this virtual CPU wanted to run (0 on bare metal). */
  steal: number;
}

/** Busy and total ticks of each listed CPU since boot (idle and iowait count as not busy; steal counts as busy). */
export function readCpuTicks(cpus: number[]): Map<number, CpuTicks> {
  const ticks = new Map<number, CpuTicks>();
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const match = /^cpu(\d+)\s+(.*)$/.exec(line);
    if (match === null || !cpus.includes(Number(match[1]))) continue;
    const values = match[2]!.trim().split(/\s+/).slice(0, 8).map(Number);
    const total = values.reduce((sum, value) => sum + value, 0);
    const idle = (values[3] ?? 0) + (values[4] ?? 0);
    ticks.set(Number(match[1]), { busy: total - idle, total, steal: values[7] ?? 0 });
  }
  return ticks;
}

/**
 * The share of the time between two {@link readCpuTicks} readings that the hypervisor gave another guest, in percent:
 * the larger of the CPUs' shares (a virtual machine's p99 follows it; see `quietStealPercent` in bench-plan.ts). 0 when
 * no time passed.
 *
 * @example
 * const before = readCpuTicks([0, 1]);
 * // ... the run ...
 * const steal = stealPercent(before, readCpuTicks([0, 1])); // 0.4
 */
export function stealPercent(before: ReadonlyMap<number, CpuTicks>, after: ReadonlyMap<number, CpuTicks>): number {
  let largest = 0;
  for (const [cpu, last] of after) {
    const first = before.get(cpu);
    if (first === undefined || last.total <= first.total) continue;
    largest = Math.max(largest, (100 * (last.steal - first.steal)) / (last.total - first.total));
  }
  return largest;
}

/** Ticks per second of /proc/<pid>/stat times (USER_HZ); 100 on every mainstream Linux build. */
export const ticksPerSecond = 100;

/**
 * Compiles a bench server (`sourcePath`, a `.ts` file under bench/) to plain JavaScript in the temp dir (esbuild,
 * dependencies left as imports and resolved through a `node_modules` link to the repository's), so that, like
 * `dist/server.js`, it pays neither the start-up time nor the ~18 MB of memory of Node's TypeScript type stripping.
 * Returns the path of the `.mjs` file.
 *
 * @example
 * const mockScript = await compileBenchServer('/repo/bench/bench-mock-upstream.ts', '/tmp/torii-bench-x');
 */
export async function compileBenchServer(sourcePath: string, temporaryDirectory: string): Promise<string> {
  const link = join(temporaryDirectory, 'node_modules');
  if (!existsSync(link)) symlinkSync(join(dirname(dirname(sourcePath)), 'node_modules'), link, 'dir');
  const outfile = join(temporaryDirectory, basename(sourcePath).replace(/\.ts$/, '.mjs'));
  await build({
    entryPoints: [sourcePath],
    outfile,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node22',
    logLevel: 'warning',
  });
  return outfile;
}
