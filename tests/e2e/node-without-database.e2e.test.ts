import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { e2eEnvironment, e2eGatewayConfig, e2eMasterKey } from './e2e-fixtures.ts';
import { freePort, nodeReadyLine, spawnGateway, type RunningGateway } from './gateway-process.ts';

/**
 * `TORII_DATABASE=off`: the documented pure-proxy mode. The gateway serves every client API with the master key,
 * opens no database and writes nothing to its data directory, in a single process and in a cluster.
 */
describe.each([{ workers: '1' }, { workers: '2' }])(
  'dist/server.js with TORII_DATABASE=off, $workers worker(s)',
  ({ workers }) => {
    let mock: MockUpstream;
    let gateway: RunningGateway;
    let dataDirectory: string;

    beforeAll(async () => {
      mock = await startMockUpstream();
      const configDirectory = mkdtempSync(join(tmpdir(), 'torii-off-config-'));
      const configPath = join(configDirectory, 'torii.config.json');
      writeFileSync(configPath, JSON.stringify(e2eGatewayConfig(mock.url)));
      dataDirectory = mkdtempSync(join(tmpdir(), 'torii-off-data-'));
      const port = await freePort();
      gateway = await spawnGateway(process.execPath, ['dist/server.js'], {
        env: {
          ...e2eEnvironment,
          TORII_DATABASE: 'off',
          TORII_WORKERS: workers,
          TORII_CONFIG: configPath,
          TORII_DATA_DIR: dataDirectory,
          PORT: String(port),
          HOST: '127.0.0.1',
        },
        port,
        readyTimeoutMs: 60_000,
        readyLine: nodeReadyLine,
      });
    }, 90_000);

    afterAll(async () => {
      await gateway?.stop();
      await mock?.close();
    });

    it('says so at start and serves chat, streams and Messages with the master key', async () => {
      // A cluster announces once every worker listens, which can come just after the first worker is ready.
      for (let waited = 0; !gateway.output().includes('"database":"off"') && waited < 30_000; waited += 50)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(gateway.output()).toContain('"database":"off"');
      const openai = new OpenAI({ baseURL: `${gateway.baseURL}/v1`, apiKey: e2eMasterKey, maxRetries: 0 });
      const answer = await openai.chat.completions.create({
        model: 'gpt-text',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(answer.choices[0]?.message.content).toBeTruthy();
      const stream = await openai.chat.completions.create({
        model: 'gpt-text',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expect(text.length).toBeGreaterThan(0);
      const anthropic = new Anthropic({ baseURL: gateway.baseURL, apiKey: e2eMasterKey, maxRetries: 0 });
      const message = await anthropic.messages.create({
        model: 'claude-text',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(message.content[0]?.type).toBe('text');
    });

    it('refuses virtual-key-shaped keys with 401 and has no key or usage admin API', async () => {
      const openai = new OpenAI({ baseURL: `${gateway.baseURL}/v1`, apiKey: 'sk-torii-not-a-key', maxRetries: 0 });
      await expect(
        openai.chat.completions.create({ model: 'gpt-text', messages: [{ role: 'user', content: 'hi' }] }),
      ).rejects.toMatchObject({ status: 401 });
      for (const path of ['/admin/keys', '/admin/usage']) {
        const response = await fetch(`${gateway.baseURL}${path}`, {
          headers: { authorization: `Bearer ${e2eMasterKey}` },
        });
        expect(response.status, path).toBe(404);
        expect(((await response.json()) as { error: { type: string } }).error.type).toBeTruthy();
      }
    });

    it('is ready, and wrote nothing to its data directory', async () => {
      expect((await fetch(`${gateway.baseURL}/health/ready`)).status).toBe(200);
      expect(readdirSync(dataDirectory)).toEqual([]);
    });
  },
);

describe('TORII_DATABASE settings at start', () => {
  it('refuses off next to a DATABASE_URL, and an unknown value, with one line naming the setting', () => {
    for (const [environment, expected] of [
      [{ TORII_DATABASE: 'off', DATABASE_URL: 'postgres://127.0.0.1:9/none' }, 'DATABASE_URL is set'],
      [{ TORII_DATABASE: 'sometimes' }, 'must be one of'],
    ] as const) {
      const result = spawnSync(process.execPath, ['dist/server.js'], {
        env: { ...process.env, TORII_WORKERS: '1', TORII_MASTER_KEY: e2eMasterKey, PORT: '0', ...environment },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('TORII_DATABASE');
      expect(result.stderr).toContain(expected);
    }
  });
});
