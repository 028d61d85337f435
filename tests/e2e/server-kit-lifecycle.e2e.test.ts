import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { e2eEnvironment, e2eGatewayConfig, readFixture } from './e2e-fixtures.ts';
import { freePort, spawnGateway, type RunningGateway } from './gateway-process.ts';
import { spawn } from 'node:child_process';

const openaiText = readFixture<{ choices: { message: { content: string } }[] }>('openai-compatible', 'text.json');

/** A runtime whose server runs on the server kit's lifecycle (adapters/server-kit/start-gateway-process.ts). */
interface KitRuntime {
  name: string;
  runtime: string;
  command: string;
  args: string[];
  environment?: Record<string, string>;
}

const kitRuntimes: KitRuntime[] = [
  {
    name: 'Node (dist/server.js, one process)',
    runtime: 'node',
    command: process.execPath,
    args: ['dist/server.js'],
    environment: { TORII_WORKERS: '1' },
  },
  {
    name: 'Deno (Deno.serve)',
    runtime: 'deno',
    command: 'node_modules/deno/deno',
    args: ['run', '--allow-net', '--allow-env', '--allow-read', '--allow-write', 'adapters/deno/server.ts'],
    environment: { DENO_NO_UPDATE_CHECK: '1' },
  },
  {
    name: 'Bun (Bun.serve)',
    runtime: 'bun',
    command: 'node_modules/bun/bin/bun.exe',
    args: ['adapters/bun/server.ts'],
  },
];

function writeConfig(config: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'torii-e2e-kit-')), 'torii.config.json');
  writeFileSync(path, JSON.stringify(config));
  return path;
}

/** The JSON lines a gateway printed. */
function logLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Runs a process to its end; resolves with its exit code and what it printed. */
function runToExit(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

// The lifecycle every server runtime shares: the start-up line, drain on SIGTERM, the usage flush before exit, and
// start-up failures as one line. Each test starts its own server, so a slow start on a busy machine has room.
describe.each(kitRuntimes)('the server kit lifecycle on $name', { timeout: 180_000 }, (kit) => {
  let mock: MockUpstream;
  const masterKey = 'sk-kit-master-key-0123456789';

  beforeAll(async () => {
    mock = await startMockUpstream();
  });

  afterAll(async () => {
    await mock?.close();
  });

  async function start(environment: Record<string, string>): Promise<RunningGateway> {
    const port = await freePort();
    return await spawnGateway(kit.command, kit.args, {
      env: {
        ...e2eEnvironment,
        ...kit.environment,
        TORII_CONFIG: writeConfig(e2eGatewayConfig(mock.url)),
        PORT: String(port),
        HOST: '127.0.0.1',
        ...environment,
      },
      port,
      readyTimeoutMs: 120_000,
      readyLine: 'torii listening on',
    });
  }

  it('drains an in-flight stream on SIGTERM, writes its usage before exit, and the next start reads it', async () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'torii-e2e-kit-data-'));
    const environment = { TORII_MASTER_KEY: masterKey, TORII_DATA_DIR: dataDirectory };
    const gateway = await start(environment);
    const announced = logLines(gateway.output()).find((line) => String(line.message).startsWith('torii listening on'));
    expect(announced).toMatchObject({ level: 'info', runtime: kit.runtime, database: 'sqlite' });
    const client = new OpenAI({ baseURL: `${gateway.baseURL}/v1`, apiKey: masterKey, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'gpt-slow',
      stream: true,
      messages: [{ role: 'user', content: 'x' }],
    });
    let text = '';
    let stopping: Promise<number | null> | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      stopping ??= gateway.stop();
    }
    expect(text).toBe(openaiText.choices[0]?.message.content);
    expect(await stopping).toBe(0);
    await expect(fetch(`${gateway.baseURL}/health/live`)).rejects.toThrow();

    // The stream's usage was flushed to the embedded database before exit: a new process on the same directory
    // reports it.
    const next = await start(environment);
    try {
      const report = (await (
        await fetch(`${next.baseURL}/admin/usage?group_by=model_group`, {
          headers: { authorization: `Bearer ${masterKey}` },
        })
      ).json()) as { data: { model_group: string; requests: number; output_tokens: number }[] };
      const row = report.data.find((entry) => entry.model_group === 'gpt-slow');
      expect(row?.requests).toBe(1);
      expect(row?.output_tokens).toBeGreaterThan(0);
    } finally {
      await next.stop();
    }
  });

  it('shows a generated master key once, in a warn line, and it works', async () => {
    const gateway = await start({ TORII_MASTER_KEY: '' });
    try {
      const announced = logLines(gateway.output()).find((line) =>
        String(line.message).startsWith('torii listening on'),
      );
      expect(announced).toMatchObject({ level: 'warn', runtime: kit.runtime });
      const generated = String(announced?.masterKey);
      expect(generated.length).toBeGreaterThanOrEqual(32);
      const models = await fetch(`${gateway.baseURL}/v1/models`, { headers: { authorization: `Bearer ${generated}` } });
      expect(models.status).toBe(200);
    } finally {
      await gateway.stop();
    }
  });

  it('refuses a port already in use with one line naming PORT, and exits 1', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const result = await runToExit(kit.command, kit.args, {
        ...e2eEnvironment,
        ...kit.environment,
        TORII_CONFIG: writeConfig(e2eGatewayConfig(mock.url)),
        TORII_DATA_DIR: mkdtempSync(join(tmpdir(), 'torii-e2e-kit-data-')),
        TORII_WORKERS: '1',
        PORT: String(port),
        HOST: '127.0.0.1',
      });
      expect(result.code).toBe(1);
      const failures = logLines(result.output).filter((line) => line.level === 'error');
      expect(failures).toHaveLength(1);
      expect(String(failures[0]?.message)).toContain('PORT');
      expect(String(failures[0]?.message)).toContain('already in use');
    } finally {
      blocker.close();
    }
  });
});
