import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const watchdogModule = fileURLToPath(new URL('./process-watchdog.ts', import.meta.url));

/** Runs an ES module snippet in a fresh Node process; resolves with how it ended and what it printed. */
function runScript(source: string): Promise<{ signal: NodeJS.Signals | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', source], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('close', (_, signal) => {
      clearTimeout(timer);
      resolve({ signal, stderr, stdout });
    }),
  );
}

describe('startProcessWatchdog', { timeout: 30_000 }, () => {
  it('kills a process whose event loop stopped turning, with one error line', async () => {
    const started = performance.now();
    const result = await runScript(`
      import { startProcessWatchdog } from ${JSON.stringify(watchdogModule)};
      startProcessWatchdog({ stallTimeoutMs: 1000, role: 'single', pollMs: 100 });
      setTimeout(() => { for (;;) {} }, 300);
    `);
    expect(result.signal).toBe('SIGKILL');
    expect(performance.now() - started).toBeLessThan(20_000);
    const line = JSON.parse(result.stderr.trim()) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 'error',
      role: 'single',
      message: expect.stringMatching(/event loop stalled/),
    });
  });

  it('leaves a process whose event loop turns alone, and never keeps it alive', async () => {
    const result = await runScript(`
      import { startProcessWatchdog } from ${JSON.stringify(watchdogModule)};
      startProcessWatchdog({ stallTimeoutMs: 1000, role: 'single', pollMs: 100 });
      let turns = 0;
      const timer = setInterval(() => { if (++turns === 30) { clearInterval(timer); console.log('done'); } }, 100);
    `);
    expect(result.signal).toBeNull();
    expect(result.stdout.trim()).toBe('done');
    expect(result.stderr).toBe('');
  });

  it('kills a spinning process when its parent dies, even by SIGKILL', async () => {
    // parent: starts a child that arms the watchdog and spins, prints the child's pid, then kills itself.
    const result = await runScript(`
      import { spawn } from 'node:child_process';
      const child = spawn(process.execPath, ['--input-type=module', '-e', ${JSON.stringify(`
        import { startProcessWatchdog } from ${JSON.stringify(watchdogModule)};
        startProcessWatchdog({ parentPid: process.ppid, role: 'worker', pollMs: 100 });
        console.log('armed');
        setTimeout(() => { for (;;) {} }, 100);
      `)}], { stdio: ['ignore', 'pipe', 'inherit'] });
      child.stdout.once('data', () => {
        console.log(child.pid);
        setTimeout(() => process.kill(process.pid, 'SIGKILL'), 300);
      });
    `);
    expect(result.signal).toBe('SIGKILL');
    const childPid = Number(result.stdout.trim());
    const deadline = Date.now() + 10_000;
    let alive = true;
    while (alive && Date.now() < deadline) {
      try {
        process.kill(childPid, 0);
        await new Promise((resolve) => setTimeout(resolve, 50));
      } catch {
        alive = false;
      }
    }
    expect(alive).toBe(false);
  });
});
