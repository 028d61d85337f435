import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './gateway-process.ts';

// Defect: a missing config file, a bad or busy PORT, a mysql:// DATABASE_URL, an unwritable data directory, a short
// master key and Redis down at start each printed a stack trace (or, in a cluster, forked and lost workers in a loop),
// and a bad provider option booted and then answered 500 to every request. Each must end the start at once with one
// line naming the setting and the reason, a non-zero exit code, and no fork loop.

/** What a start that must fail printed and how it ended. */
interface FailedStart {
  code: number | null;
  stderr: string;
  stdout: string;
  elapsedMs: number;
}

/** How long a start that must fail may take (the Redis case waits 10 s for Redis first). */
const exitBoundMs = 40_000;

async function startExpectingFailure(environment: Record<string, string>): Promise<FailedStart> {
  const started = performance.now();
  const child = spawn(process.execPath, ['dist/server.js'], {
    env: {
      ...process.env,
      TORII_DATA_DIR: mkdtempSync(join(tmpdir(), 'torii-e2e-startup-')),
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      ...environment,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      // gone
    }
  }, exitBoundMs);
  const code = await new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  return { code, stderr, stdout, elapsedMs: performance.now() - started };
}

/** Asserts the one-line failure: non-zero exit in time, one JSON line on stderr naming `setting`, no stack frames. */
function expectOneLineFailure(result: FailedStart, setting: string, reason: RegExp): void {
  const context = `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
  expect(result.code, context).not.toBeNull();
  expect(result.code, context).not.toBe(0);
  expect(result.elapsedMs, context).toBeLessThan(exitBoundMs);
  expect(result.stderr, context).not.toContain('    at ');
  const lines = result.stderr.split('\n').filter((line) => line.trim().length > 0);
  expect(lines, context).toHaveLength(1);
  const line = JSON.parse(lines[0] as string) as { level: string; setting?: string; message: string };
  expect(line.level).toBe('error');
  expect(line.setting, context).toBe(setting);
  expect(line.message).toContain(setting);
  expect(line.message).toMatch(reason);
  // No worker was lost in a loop: the cluster never announced a worker exit or restart.
  expect(`${result.stdout}${result.stderr}`, context).not.toMatch(/worker/i);
}

function writeConfig(config: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'torii-e2e-startup-config-')), 'torii.config.json');
  writeFileSync(path, JSON.stringify(config));
  return path;
}

const modes = [
  { name: 'a single process', workers: '1' },
  { name: 'a cluster of 2', workers: '2' },
];

describe.each(modes)('start-up errors of dist/server.js in $name', ({ workers }) => {
  let busy: Server;
  let busyPort: number;

  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as { port: number }).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => busy?.close(resolve));
  });

  const start = (environment: Record<string, string>) =>
    startExpectingFailure({ TORII_WORKERS: workers, ...environment });

  it('a missing config file names TORII_CONFIG', { timeout: 60_000 }, async () => {
    const result = await start({ TORII_CONFIG: '/nonexistent/torii.config.yaml' });
    expectOneLineFailure(result, 'TORII_CONFIG', /does not exist/);
  });

  it('a PORT that is not a port number names PORT', { timeout: 60_000 }, async () => {
    expectOneLineFailure(await start({ PORT: 'eighty' }), 'PORT', /integer from 0 to 65535/);
    expectOneLineFailure(await start({ PORT: '70000' }), 'PORT', /integer from 0 to 65535/);
  });

  it('a TORII_LOG_LEVEL that is not a level names TORII_LOG_LEVEL', { timeout: 60_000 }, async () => {
    expectOneLineFailure(
      await start({ TORII_LOG_LEVEL: 'verbose' }),
      'TORII_LOG_LEVEL',
      /must be one of debug, info, warn, error, silent/,
    );
  });

  it('a PORT already in use names PORT, once', { timeout: 60_000 }, async () => {
    expectOneLineFailure(await start({ PORT: String(busyPort) }), 'PORT', /already in use/);
  });

  it('a DATABASE_URL that is not Postgres names DATABASE_URL', { timeout: 60_000 }, async () => {
    const result = await start({ DATABASE_URL: 'mysql://root:secret-password@127.0.0.1:3306/torii' });
    expectOneLineFailure(result, 'DATABASE_URL', /postgres:\/\//);
    expect(result.stderr).not.toContain('secret-password');
  });

  it('an unreachable DATABASE_URL names DATABASE_URL without its password', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const result = await start({ DATABASE_URL: `postgres://torii:secret-password@127.0.0.1:${port}/torii` });
    expectOneLineFailure(result, 'DATABASE_URL', /ECONNREFUSED/);
    expect(result.stderr).not.toContain('secret-password');
  });

  it('a data directory that cannot be created names TORII_DATA_DIR', { timeout: 60_000 }, async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'torii-e2e-startup-file-')), 'a-file');
    writeFileSync(file, 'not a directory');
    expectOneLineFailure(await start({ TORII_DATA_DIR: join(file, 'data') }), 'TORII_DATA_DIR', /not a directory/);
  });

  it('a master key shorter than 8 characters names TORII_MASTER_KEY', { timeout: 60_000 }, async () => {
    const result = await start({ TORII_MASTER_KEY: 'short' });
    expectOneLineFailure(result, 'TORII_MASTER_KEY', /at least 8 characters/);
    expect(result.stderr).not.toContain('"short"');
  });

  it('Redis down at start names REDIS_URL, once', { timeout: 60_000 }, async () => {
    const port = await freePort();
    expectOneLineFailure(await start({ REDIS_URL: `redis://127.0.0.1:${port}` }), 'REDIS_URL', /did not answer/);
  });

  it('a bad provider option fails at start, naming the field', { timeout: 60_000 }, async () => {
    const config = writeConfig({
      modelGroups: {
        claude: {
          deployments: [
            {
              provider: 'anthropic',
              model: 'claude-x',
              apiKey: 'sk-ant',
              baseURL: 'http://127.0.0.1:9/v1',
              options: { defaultMaxTokens: 'lots' },
            },
          ],
        },
        gpt: {
          deployments: [
            {
              provider: 'openai',
              model: 'gpt-x',
              apiKey: 'sk',
              baseURL: 'http://127.0.0.1:9/v1',
              options: { maxTokensField: 'tokens' },
            },
          ],
        },
      },
    });
    const result = await start({ TORII_CONFIG: config });
    expectOneLineFailure(result, 'modelGroups.claude.deployments[0].options.defaultMaxTokens', /invalid config/);
    expect(result.stderr).toContain('modelGroups.gpt.deployments[0].options.maxTokensField');
  });
});
