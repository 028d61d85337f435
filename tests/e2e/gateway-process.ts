import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';

/** A gateway started for a test: where to reach it and how to stop it. */
export interface RunningGateway {
  baseURL: string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
  /** Everything the process printed so far (for failure messages). */
  output(): string;
  /**
   * Resolves once the process has printed `text` (checked on each chunk it prints: an access line is written after
   * the response ended), or fails with the output after `timeoutMs` (default 20 s).
   */
  waitForOutput(text: string, timeoutMs?: number): Promise<void>;
  /** The process id of the spawned process (the cluster primary for a Node cluster), when it has one. */
  pid?: number;
}

/** A free loopback port. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/**
 * Starts a gateway on a free port, and again on another when something else took that port between {@link freePort}
 * and the gateway's own listen (parallel test files on a busy machine): the start's error names the port in use.
 */
export async function startOnFreePort(
  start: (port: number) => Promise<RunningGateway>,
  attempts = 3,
): Promise<RunningGateway> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort());
    } catch (error) {
      const portTaken = /Address already in use|EADDRINUSE|is already in use/.test(String(error));
      if (!portTaken || attempt >= attempts) throw error;
    }
  }
}

/** Polls `url` until it answers 200, or fails with the process output after `timeoutMs`. */
export async function waitUntilReady(
  url: string,
  child: ChildProcess,
  output: () => string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`gateway exited with ${child.exitCode} before it was ready:\n${output()}`);
    try {
      const response = await fetch(url);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gateway not ready at ${url} within ${timeoutMs} ms:\n${output()}`);
}

/** What `node dist/server.js` prints once every worker listens (the cluster primary's announcement). */
export const nodeReadyLine = 'torii listening on';

/** Resolves once `output()` holds `line` (checked on each chunk the process prints), or fails after `timeoutMs`. */
async function waitForLine(child: ChildProcess, output: () => string, line: string, timeoutMs: number): Promise<void> {
  if (output().includes(line)) return;
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (!output().includes(line)) return;
      finish();
      resolve();
    };
    const exited = () => {
      finish();
      reject(new Error(`gateway exited before it printed ${JSON.stringify(line)}:\n${output()}`));
    };
    const timer = setTimeout(
      () => {
        finish();
        reject(new Error(`gateway did not print ${JSON.stringify(line)} within ${timeoutMs} ms:\n${output()}`));
      },
      Math.max(timeoutMs, 0),
    );
    const finish = () => {
      clearTimeout(timer);
      child.stdout?.off('data', check);
      child.stderr?.off('data', check);
      child.off('exit', exited);
    };
    // Listeners added after spawnGateway's own, so the chunk is already in output() when check runs.
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.once('exit', exited);
  });
}

/** Spawns a gateway process, waits for `/health/ready` (and `readyLine` when given), and returns its handle. */
export async function spawnGateway(
  command: string,
  args: string[],
  options: {
    env: Record<string, string>;
    port: number;
    readyTimeoutMs: number;
    cwd?: string;
    /** Also wait until the process prints this (a cluster primary's announcement: every worker listens). */
    readyLine?: string;
  },
): Promise<RunningGateway> {
  // Each gateway keeps its embedded database and usage spill in a directory of its own unless the test says otherwise
  // (PGlite allows one process per directory, and tests run in parallel).
  const dataDirectory = mkdtempSync(join(tmpdir(), 'torii-e2e-data-'));
  const child = spawn(command, args, {
    env: { ...process.env, TORII_DATA_DIR: dataDirectory, ...options.env },
    cwd: options.cwd ?? process.cwd(),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let printed = '';
  child.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const output = () => printed;
  const baseURL = `http://127.0.0.1:${options.port}`;
  try {
    const startedAt = Date.now();
    await waitUntilReady(`${baseURL}/health/ready`, child, output, options.readyTimeoutMs);
    if (options.readyLine !== undefined)
      await waitForLine(child, output, options.readyLine, options.readyTimeoutMs - (Date.now() - startedAt));
  } catch (error) {
    killTree(child, 'SIGKILL');
    throw error;
  }
  return {
    baseURL,
    output,
    waitForOutput: (text, timeoutMs = 20_000) => waitForLine(child, output, text, timeoutMs),
    ...(child.pid === undefined ? {} : { pid: child.pid }),
    async stop() {
      // Already gone (exited, or killed by a signal: then exitCode stays null and 'exit' will not fire again).
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      const timer = setTimeout(() => killTree(child, 'SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      killTree(child, 'SIGKILL');
      return code;
    },
  };
}

function killTree(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}
