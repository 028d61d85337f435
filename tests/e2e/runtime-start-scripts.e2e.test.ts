import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processGroupMembers } from '../chaos/process-tree.ts';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { e2eEnvironment, e2eGatewayConfig, e2eMasterKey, readFixture } from './e2e-fixtures.ts';
import { freePort, waitUntilReady } from './gateway-process.ts';

const expectedText = readFixture<{ choices: { message: { content: string } }[] }>('openai-compatible', 'text.json')
  .choices[0]?.message.content;

// The README's Deno and Bun commands, from a clone: `bash scripts/start-deno.sh` and `bash scripts/start-bun.sh` (the
// runtime from the npm registry, nothing on PATH needed). A SIGTERM to the process the command started reaches the
// server: it drains and exits 0, and no runtime process is left behind (the deno package's Node wrapper used to keep
// its child running).
describe.each(['deno', 'bun'])('bash scripts/start-%s.sh', { timeout: 180_000 }, (runtime) => {
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
  });

  afterAll(async () => {
    await mock?.close();
  });

  it('serves the openai SDK, and a SIGTERM to it stops the runtime itself, leaving no process behind', async () => {
    const directory = mkdtempSync(join(tmpdir(), `torii-start-${runtime}-`));
    const configPath = join(directory, 'torii.config.json');
    writeFileSync(configPath, JSON.stringify(e2eGatewayConfig(mock.url)));
    const port = await freePort();
    const child = spawn('bash', [`scripts/start-${runtime}.sh`], {
      env: {
        ...process.env,
        ...e2eEnvironment,
        PORT: String(port),
        HOST: '127.0.0.1',
        TORII_CONFIG: configPath,
        TORII_DATABASE: 'off',
        // The suite's own install is in place; the script's `pnpm install` would only re-check it mid-run.
        TORII_SETUP_SKIP_INSTALL: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let printed = '';
    child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const group = child.pid as number;
    try {
      await waitUntilReady(`http://127.0.0.1:${port}/health/ready`, child, () => printed, 150_000);
      const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: e2eMasterKey, maxRetries: 0 });
      const answer = await client.chat.completions.create({
        model: 'gpt-text',
        messages: [{ role: 'user', content: 'Hello' }],
      });
      expect(answer.choices[0]?.message.content).toBe(expectedText);
      // The script exec'd the runtime: the pid it started is the runtime's.
      process.kill(group, 'SIGTERM');
      expect(await exited).toBe(0);
      expect(processGroupMembers(group)).toEqual([]);
    } finally {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // nothing left
      }
    }
  });
});
