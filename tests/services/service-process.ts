import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/** A server process started for the test run, with the tail of its output kept for error messages. */
export interface ServiceProcess {
  child: ChildProcess;
  /** The last few kilobytes the process wrote to stdout and stderr. */
  output(): string;
  /** Sends `signal` and resolves once the process has exited (SIGKILL after `graceMs`). */
  stop(signal: NodeJS.Signals, graceMs?: number): Promise<void>;
}

const outputLimit = 8_192;

/** Starts `command`, keeping its recent output; rejects when it cannot be spawned at all (missing binary). */
export async function startServiceProcess(
  command: string,
  args: readonly string[],
  options: SpawnOptions = {},
): Promise<ServiceProcess> {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-outputLimit);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return {
    child,
    output: () => output,
    async stop(signal, graceMs = 5_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resolves when `probe` succeeds, retrying every 25 ms; rejects with the process output after `timeoutMs`. */
export async function waitUntilReady(
  name: string,
  service: ServiceProcess,
  probe: () => Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (service.child.exitCode !== null || service.child.signalCode !== null) {
      throw new Error(`${name} exited during start (code ${service.child.exitCode}):\n${service.output()}`);
    }
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${name} was not ready after ${timeoutMs} ms:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
