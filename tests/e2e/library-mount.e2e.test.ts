import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import OpenAI from 'openai';
import { createGateway } from 'torii-gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockUpstreamApiKey, startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { readFixture } from './e2e-fixtures.ts';

const openaiText = readFixture<{ choices: { message: { content: string } }[] }>('openai-compatible', 'text.json');
const anthropicText = readFixture<{ content: { text: string }[] }>('anthropic', 'text.json');

// The package as a library (its "exports", as built by `pnpm build`), mounted under /llm in someone else's Hono app.
describe('torii as a library mounted in another Hono app', () => {
  let mock: MockUpstream;
  let server: ServerType;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    const app = new Hono();
    app.get('/', (c) => c.text('the host application'));
    app.route(
      '/llm',
      createGateway(
        {
          modelGroups: {
            fast: {
              deployments: [
                { provider: 'openai', model: 'text', baseURL: `${mock.url}/v1`, apiKey: '${UPSTREAM_KEY}' },
              ],
            },
            claude: {
              deployments: [
                { provider: 'anthropic', model: 'text', baseURL: `${mock.url}/v1`, apiKey: '${UPSTREAM_KEY}' },
              ],
            },
          },
        },
        { masterKey: 'sk-library-master-key', environment: { UPSTREAM_KEY: mockUpstreamApiKey } },
      ),
    );
    const port = await new Promise<number>((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
    });
    client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/llm/v1`, apiKey: 'sk-library-master-key', maxRetries: 0 });
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await mock?.close();
  });

  it('serves chat completions, streamed and not, under the sub-path', async () => {
    const completion = await client.chat.completions.create({
      model: 'fast',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(completion.choices[0]?.message.content).toBe(openaiText.choices[0]?.message.content);
    let text = '';
    for await (const chunk of await client.chat.completions.create({
      model: 'claude',
      stream: true,
      messages: [{ role: 'user', content: 'Hi' }],
    })) {
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe(anthropicText.content[0]?.text);
  });

  it('lists and retrieves its model groups under the sub-path', async () => {
    const models = [];
    for await (const model of client.models.list()) models.push(model.id);
    expect(models.sort()).toEqual(['claude', 'fast']);
    expect((await client.models.retrieve('fast')).id).toBe('fast');
  });

  it('rejects an invalid config with the field named', () => {
    expect(() =>
      createGateway({ modelGroups: { broken: { deployments: [] } } }, { masterKey: 'sk-library-master-key' }),
    ).toThrow(/modelGroups\.broken\.deployments/);
  });
});
