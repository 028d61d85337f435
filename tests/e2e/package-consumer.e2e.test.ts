import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, mockUpstreamApiKey, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { readFixture } from './e2e-fixtures.ts';
import { freePort } from './gateway-process.ts';
import {
  directoryBytes,
  freshConsumerDirectory,
  installConsumer,
  npm,
  packageName,
  packRepository,
  startApp,
  tarballPaths,
  typeCheckConsumer,
  type RunningApp,
} from './package-consumer-setup.ts';

const execFileAsync = promisify(execFile);
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const masterKey = 'sk-torii-package-consumer';
const expectedText = readFixture<{ choices: { message: { content: string } }[] }>('openai-compatible', 'text.json')
  .choices[0]?.message.content;

// Defect 17 of the hardening issue: the README said `npm install torii`, which installs an unrelated package that
// owns that name on the registry. The README's install line must name this package.
describe('the npm package the README installs', () => {
  it('is this package: the README installs and imports the name in package.json, and nothing else', () => {
    const installs = [...readme.matchAll(/npm install ([^\s`]+)/g)].map((match) => match[1]);
    expect(installs).toContain(packageName);
    const imported = new Set([...readme.matchAll(/from '([^']+)'/g)].map((match) => match[1] as string));
    for (const specifier of imported) {
      if (specifier.startsWith('torii')) expect(specifier.split('/')[0]).toBe(packageName);
    }
    expect(packageName).not.toBe('torii');
  });
});

// The packed tarball, installed with npm in fresh directories outside the repository, as a new user does it.
describe('the packed package in a fresh directory', { timeout: 300_000 }, () => {
  let tarball: string;
  let consumer: string;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    tarball = packRepository(freshConsumerDirectory('torii-pack-'));
    consumer = installConsumer(tarball);
  }, 600_000);

  afterAll(async () => {
    await mock?.close();
  });

  it('ships no tests, fixtures, snapshots, sources or source maps', () => {
    const paths = tarballPaths(tarball);
    expect(paths).toContain('package/dist/server.js');
    expect(paths).toContain('package/dist/lib/index.js');
    const unwanted = paths.filter((path) =>
      /\.test\.|__fixtures__|__snapshots__|\.map$|\/tests\/|^package\/(src|providers|adapters)\/(?!db\/)/.test(path),
    );
    expect(unwanted).toEqual([]);
  });

  it('installs for the fetch handler alone (the package and hono) in under 10 MB, and nothing else', () => {
    const directory = freshConsumerDirectory('torii-fetch-only-');
    npm(['install', '--prefer-offline', tarball, 'hono'], directory);
    const installed = execFileSync('npm', ['ls', '--all', '--parseable'], { cwd: directory, encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes('node_modules'))
      .map((line) => line.slice(line.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(installed.sort()).toEqual(['hono', packageName]);
    const bytes = directoryBytes(join(directory, 'node_modules'));
    console.log(`fetch-handler install: ${(bytes / 1e6).toFixed(2)} MB`);
    expect(bytes).toBeLessThan(10_000_000);
    // The root entry runs with only hono beside it.
    writeFileSync(
      join(directory, 'main.js'),
      `import { Hono } from 'hono';
import { createGateway } from '${packageName}';
const app = new Hono();
app.route('/llm', createGateway({ modelGroups: {} }, { masterKey: 'sk-package-test-key' }));
const live = await app.request('/llm/health/live');
const models = await app.request('/llm/v1/models', { headers: { authorization: 'Bearer sk-package-test-key' } });
const unknown = await app.request('/llm/v2/nothing');
console.log(JSON.stringify({ live: live.status, models: models.status, unknown: (await unknown.json()).error.code }));
`,
    );
    const output = execFileSync(process.execPath, ['main.js'], { cwd: directory, encoding: 'utf8' });
    expect(JSON.parse(output.trim().split('\n').at(-1) as string)).toEqual({
      live: 200,
      models: 200,
      unknown: 'unknown_url',
    });
  });

  it('works with the lowest hono its peer range allows: the README line type-checks and a chat is served', async () => {
    const { peerDependencies } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      peerDependencies: { hono: string };
    };
    const lowest = /^\^(\d+\.\d+\.\d+)$/.exec(peerDependencies.hono)?.[1];
    expect(lowest).toBeDefined();
    const directory = freshConsumerDirectory('torii-lowest-hono-');
    npm(['install', '--prefer-offline', tarball, `hono@${lowest}`, 'typescript@6', '@types/node@24'], directory);
    writeFileSync(
      join(directory, 'main.ts'),
      `import { Hono } from 'hono';
import { createGateway } from '${packageName}';
const app = new Hono();
app.route('/llm', createGateway(
  { modelGroups: { 'gpt-text': { deployments: [{ provider: 'openai', model: 'text', baseURL: process.env.MOCK_URL + '/v1', apiKey: '\${MOCK_UPSTREAM_KEY}' }] } } },
  { masterKey: 'sk-lowest', environment: process.env },
));
const response = await app.request('/llm/v1/chat/completions', {
  method: 'POST',
  headers: { authorization: 'Bearer sk-lowest', 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'gpt-text', messages: [{ role: 'user', content: 'Hello' }] }),
});
console.log(JSON.stringify(await response.json()));
`,
    );
    writeFileSync(join(directory, 'consumer-lowest.ts'), readFileSync(join(directory, 'main.ts')));
    expect(typeCheckConsumer(directory, 'consumer-lowest.ts', 'node16')).toEqual([]);
    // Asynchronously: the mock upstream answers from this process.
    const { stdout: output } = await execFileAsync(process.execPath, ['main.ts'], {
      cwd: directory,
      encoding: 'utf8',
      env: { ...process.env, MOCK_URL: mock.url, MOCK_UPSTREAM_KEY: mockUpstreamApiKey },
    });
    const answer = JSON.parse(output.trim().split('\n').at(-1) as string) as {
      choices: { message: { content: string } }[];
    };
    expect(answer.choices[0]?.message.content).toBe(expectedText);
  });

  for (const moduleResolution of ['node16', 'bundler'] as const) {
    it(`type-checks the root, node, node-handler, bun and driver entries in a strict consumer (skipLibCheck: false, ${moduleResolution})`, () => {
      expect(typeCheckConsumer(consumer, 'consumer-entries.ts', moduleResolution)).toEqual([]);
    });

    it(`type-checks the accounting and Postgres driver entries in a strict consumer: no error outside drizzle-orm's own declarations (${moduleResolution})`, () => {
      const errors = typeCheckConsumer(consumer, 'consumer-accounting.ts', moduleResolution);
      // drizzle-orm 0.45's declarations do not pass skipLibCheck: false themselves (any consumer of drizzle sees them).
      expect(errors.filter((line) => !line.startsWith('node_modules/drizzle-orm/'))).toEqual([]);
    });
  }

  /** Calls a mounted gateway with the real openai SDK: text, a stream, and an unknown path's JSON 404. */
  async function expectServedThrough(baseURL: string): Promise<void> {
    const client = new OpenAI({ baseURL, apiKey: masterKey, maxRetries: 0, timeout: 120_000 });
    const answer = await client.chat.completions.create({
      model: 'gpt-text',
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(answer.choices[0]?.message.content).toBe(expectedText);
    const stream = await client.chat.completions.create({
      model: 'gpt-text',
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
    });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? '';
    expect(streamed).toBe(expectedText);
    const unknown = await fetch(`${baseURL}/nothing/here`, { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('unknown_url');
    const refused = await fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-wrong', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-text', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { type: string } }).error.type).toBeTypeOf('string');
  }

  async function withApp(
    command: string[],
    environment: Record<string, string>,
    run: (origin: string) => Promise<void>,
    cwd = consumer,
  ): Promise<void> {
    const port = await freePort();
    const app: RunningApp = await startApp(command, {
      cwd,
      env: {
        PORT: String(port),
        MOCK_URL: mock.url,
        MOCK_UPSTREAM_KEY: mockUpstreamApiKey,
        TORII_MASTER_KEY: masterKey,
        ...environment,
      },
      readyLine: command.includes('dev') ? 'Ready' : 'listening',
      timeoutMs: 240_000,
    });
    try {
      await run(`http://127.0.0.1:${port}`);
    } catch (error) {
      throw new Error(`${String(error)}\n--- the app printed:\n${app.output()}`, { cause: error });
    } finally {
      await app.stop();
    }
  }

  /** Writes a config file in the consumer directory with one group, `gpt-text`, served by the mock; its path. */
  function writeMockConfig(name: string): string {
    const path = join(consumer, name);
    writeFileSync(
      path,
      JSON.stringify({
        modelGroups: {
          'gpt-text': {
            deployments: [
              { provider: 'openai', model: 'text', baseURL: `${mock.url}/v1`, apiKey: '${MOCK_UPSTREAM_KEY}' },
            ],
          },
        },
      }),
    );
    return path;
  }

  it('serves under a Hono app (app.route)', async () => {
    await withApp([process.execPath, 'hono-app.mjs'], {}, (origin) => expectServedThrough(`${origin}/llm/v1`));
  });

  it('serves under Express mounted before express.json(), and the host keeps its own JSON routes', async () => {
    await withApp([process.execPath, 'express-app.mjs'], {}, async (origin) => {
      await expectServedThrough(`${origin}/llm/v1`);
      const echoed = await fetch(`${origin}/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ host: 'still parses its own bodies' }),
      });
      expect(await echoed.json()).toEqual({ host: 'still parses its own bodies' });
    });
  });

  it('serves under Express behind a global express.json() too (the body it parsed is taken over)', async () => {
    await withApp([process.execPath, 'express-app.mjs'], { PARSER_FIRST: '1' }, (origin) =>
      expectServedThrough(`${origin}/llm/v1`),
    );
  });

  it('serves under Fastify (a scope under /llm that leaves the body to the gateway)', async () => {
    await withApp([process.execPath, 'fastify-app.mjs'], {}, (origin) => expectServedThrough(`${origin}/llm/v1`));
  });

  it('serves as a plain node:http handler', async () => {
    await withApp([process.execPath, 'node-http-app.mjs'], {}, (origin) => expectServedThrough(`${origin}/v1`));
  });

  it('serves as a Next.js App Router route handler (basePath /api/llm)', async () => {
    const next = join(consumer, 'node_modules', 'next', 'dist', 'bin', 'next');
    await withApp(
      [process.execPath, next, 'dev', '--port', '${PORT}'],
      { NEXT_TELEMETRY_DISABLED: '1' },
      (origin) => expectServedThrough(`${origin}/api/llm/v1`),
      join(consumer, 'next-app'),
    );
  });

  it('runs as a command: npx torii-gateway --config, --help and --version', async () => {
    const bin = join(consumer, 'node_modules', '.bin', 'torii-gateway');
    expect(execFileSync(bin, ['--version'], { cwd: consumer, encoding: 'utf8' }).trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(execFileSync(bin, ['--help'], { cwd: consumer, encoding: 'utf8' })).toContain('--config FILE');
    const configPath = writeMockConfig('torii.json');
    // The embedded SQLite is Node's own: the command serves with no optional package installed.
    await withApp(
      [bin, '--config', configPath, '--port', '${PORT}', '--workers', '1', '--host', '127.0.0.1'],
      { TORII_DATA_DIR: join(consumer, '.torii') },
      (origin) => expectServedThrough(`${origin}/v1`),
    );
    // An optional package that is not installed: one line naming it, exit 1.
    let failure = '';
    try {
      execFileSync(bin, ['--config', configPath, '--workers', '1'], {
        cwd: consumer,
        encoding: 'utf8',
        env: { ...process.env, TORII_DATABASE: 'pglite', TORII_DATA_DIR: join(consumer, '.torii-pglite') },
        stdio: 'pipe',
      });
    } catch (error) {
      failure = String((error as { stderr?: string }).stderr);
      expect((error as { status?: number }).status).toBe(1);
    }
    expect(failure).toContain('npm install @electric-sql/pglite');
  });

  it('serves on Bun from the package (torii-gateway/bun), with the embedded database', async () => {
    const configPath = writeMockConfig('torii-bun.json');
    await withApp(
      [join(process.cwd(), 'node_modules', 'bun', 'bin', 'bun.exe'), 'bun-app.mjs'],
      { TORII_CONFIG: configPath, TORII_DATA_DIR: join(consumer, '.torii-bun'), HOST: '127.0.0.1' },
      (origin) => expectServedThrough(`${origin}/v1`),
    );
  });

  it('starts from a LiteLLM proxy config.yaml, and `check` says what it resolved and what it did not take', async () => {
    const bin = join(consumer, 'node_modules', '.bin', 'torii-gateway');
    const litellmPath = join(consumer, 'litellm-config.yaml');
    writeFileSync(
      litellmPath,
      `model_list:
  - model_name: gpt-text
    litellm_params:
      model: openai/text
      api_base: ${mock.url}/v1
      api_key: os.environ/MOCK_UPSTREAM_KEY
      tpm: 100000
router_settings:
  num_retries: 2
litellm_settings:
  success_callback: ["langfuse"]
general_settings:
  master_key: os.environ/LITELLM_MASTER_KEY
`,
    );
    const environment = { ...process.env, MOCK_UPSTREAM_KEY: mockUpstreamApiKey };
    const report = execFileSync(bin, ['check', '--config', litellmPath], {
      cwd: consumer,
      encoding: 'utf8',
      env: environment,
    });
    expect(report).toContain('gpt-text');
    expect(report).toContain('litellm_settings.success_callback');
    expect(report).toContain('MOCK_UPSTREAM_KEY');
    expect(report).not.toContain(mockUpstreamApiKey);
    const asJson = JSON.parse(
      execFileSync(bin, ['check', '--config', litellmPath, '--json'], {
        cwd: consumer,
        encoding: 'utf8',
        env: environment,
      }),
    ) as { valid?: boolean };
    expect(asJson.valid).toBe(true);
    await withApp(
      [bin, '--config', litellmPath, '--port', '${PORT}', '--workers', '1', '--host', '127.0.0.1'],
      { TORII_DATA_DIR: join(consumer, '.torii-litellm') },
      (origin) => expectServedThrough(`${origin}/v1`),
    );
  });
});
