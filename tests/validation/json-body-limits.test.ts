import { hash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinProviders } from '../../providers/index.ts';
import { createKeyAdministration } from '../../src/auth/key-administration.ts';
import { createLocalKeyInvalidationBus } from '../../src/auth/local-key-invalidation-bus.ts';
import { createVirtualKeyAuthenticator } from '../../src/auth/virtual-key-authenticator.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { createDrizzleKeyStore } from '../../src/db/drizzle-key-store.ts';
import { createGateway } from '../../src/gateway.ts';
import { mockUpstreamApiKey, startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { createTestPglite, type TestDatabase } from '../services/test-database.ts';

const masterKey = 'sk-json-limits-master-key';
const sha256 = (text: string) => hash('sha256', text, 'buffer');

/** `[[[...]]]` nested `depth` levels deep. */
const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
/** `{"a":{"a":...{}}}` nested `depth` levels deep. */
const nestedObjects = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
/** A JSON array of `count` ones (two bytes an element: 2M elements are a 4 MB body, under the 4 MiB limit). */
const longArray = (count: number) => `[${'1,'.repeat(count - 1)}1]`;
/** `messages.[0].content` followed by `[0]` segments, as many as make a container at depth `depth`. */
/** The `param` of content nested `depth` deep: a deep path keeps its first 6 and last 2 segments around `…`. */
const deepContentParam = (depth: number) =>
  depth > 12 ? 'messages.[0].content.[0].[0].[0].….[0].[0]' : `messages.[0].content${'.[0]'.repeat(depth - 4)}`;

interface Answer {
  status: number;
  error: { message: string; type: string; param: string | null; code: string | null };
  elapsedMs: number;
}

// Defect (issue 8, item 10): a 10 KB body nested 5,000 levels deep gave a 500 (stack overflow when re-serialised or
// validated), and 1-2 million array elements cost seconds of CPU, then a 500. Both must be a 400 naming the field,
// in bounded time, on every route that reads a JSON body, and the gateway must keep serving.
describe('JSON depth and element limits through the gateway (chat, embeddings, admin API)', { timeout: 60_000 }, () => {
  let mock: MockUpstream;
  let database: TestDatabase;
  let gateway: ReturnType<typeof createGateway>;

  const send = async (path: string, body: string, method = 'POST'): Promise<Answer> => {
    const started = performance.now();
    const response = await gateway.request(path, {
      method,
      headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
      body,
    });
    const text = await response.text();
    const elapsedMs = performance.now() - started;
    let error: Answer['error'];
    try {
      error = (JSON.parse(text) as { error: Answer['error'] }).error;
    } catch {
      throw new Error(`not a JSON answer (${response.status}): ${text.slice(0, 200)}`);
    }
    return { status: response.status, error, elapsedMs };
  };

  const chat = (fields: string) => send('/v1/chat/completions', `{"model":"fast",${fields}}`);

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createTestPglite();
    const store = createDrizzleKeyStore(database.db);
    const invalidations = createLocalKeyInvalidationBus();
    const config = parseGatewayConfig(
      {
        modelGroups: {
          fast: {
            deployments: [{ provider: 'openai', model: 'text', baseURL: `${mock.url}/v1`, apiKey: mockUpstreamApiKey }],
          },
          claude: {
            deployments: [
              { provider: 'anthropic', model: 'text', baseURL: `${mock.url}/v1`, apiKey: mockUpstreamApiKey },
            ],
          },
          embed: {
            deployments: [
              { provider: 'openai', model: 'embedding', baseURL: `${mock.url}/v1`, apiKey: mockUpstreamApiKey },
            ],
          },
        },
      },
      {},
    );
    gateway = createGateway({
      config,
      providers: builtinProviders,
      authenticator: createVirtualKeyAuthenticator({ masterKey, store, invalidations, sha256 }),
      administration: { keys: createKeyAdministration({ store, invalidations, sha256 }) },
      services: { logger: { info() {}, warn() {}, error() {} } },
    });
  }, 120_000);

  afterAll(async () => {
    await mock?.close();
    await database?.drop();
  });

  it('answers a 5,000-deep array in a message with a 400 naming the field', async () => {
    const answer = await chat(`"messages":[{"role":"user","content":${nestedArrays(5_000)}}]`);
    expect(answer.status).toBe(400);
    expect(answer.error.type).toBe('invalid_request_error');
    expect(answer.error.code).toBe('json_too_deep');
    expect(answer.error.param).toBe(deepContentParam(129));
    expect(answer.error.message).toContain('at most 128 levels');
  });

  it.each([
    ['a field the gateway passes through', 'fast', `"messages":[{"role":"user","content":"hi"}],"extra":`, 'extra'],
    [
      'tool parameters (pass-through)',
      'fast',
      '"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":',
      'tools.[0].function.parameters',
    ],
    [
      'tool parameters (translated for Anthropic)',
      'claude',
      '"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":',
      'tools.[0].function.parameters',
    ],
  ])('answers 5,000-deep objects in %s with a 400 naming the field', async (_case, model, prefix, param) => {
    const closing = prefix.includes('"tools"') ? '}}]}' : '}';
    const body = `{"model":"${model}",${prefix}${nestedObjects(5_000)}${closing}`;
    const answer = await send('/v1/chat/completions', body);
    expect(answer.status).toBe(400);
    expect(answer.error.code).toBe('json_too_deep');
    expect(answer.error.param?.startsWith(`${param}.a.a`)).toBe(true);
  });

  it('answers 100,000-deep nesting with a 400, without overflowing anything', async () => {
    const answer = await chat(`"messages":[{"role":"user","content":${nestedArrays(100_000)}}]`);
    expect(answer.status).toBe(400);
    expect(answer.error.param).toBe(deepContentParam(129));
  });

  it('answers 2 million messages with a 400 naming messages, quickly', async () => {
    const answer = await chat(`"messages":${longArray(2_000_000)}`);
    expect(answer.status).toBe(400);
    expect(answer.error.code).toBe('array_above_max_length');
    expect(answer.error.param).toBe('messages');
    expect(answer.error.message).toBe(
      "Invalid 'messages': array too long. Expected an array with maximum length 100000.",
    );
    // Refused at element 100,001, before any parsing or validation: tens of milliseconds, where it took seconds
    // (generous, for a busy machine).
    expect(answer.elapsedMs).toBeLessThan(5_000);
  });

  it('answers 2 million elements in a pass-through field and in an embeddings input with a 400', async () => {
    const extra = await chat(`"messages":[{"role":"user","content":"hi"}],"extra":{"list":${longArray(2_000_000)}}`);
    expect(extra.status).toBe(400);
    expect(extra.error.param).toBe('extra.list');
    const embeddings = await send('/v1/embeddings', `{"model":"embed","input":${longArray(2_000_000)}}`);
    expect(embeddings.status).toBe(400);
    expect(embeddings.error.param).toBe('input');
  });

  it('lets legitimate large requests through: 2,048 token arrays of 100 tokens, a tool schema 30 levels deep', async () => {
    const tokens = `[${Array.from({ length: 100 }, (_, index) => index).join(',')}]`;
    const input = `[${Array.from({ length: 2_048 }, () => tokens).join(',')}]`;
    const embeddings = await send('/v1/embeddings', `{"model":"embed","input":${input}}`);
    expect(embeddings.status).toBe(200);
    let schema = '{"type":"string"}';
    for (let level = 0; level < 30; level++) schema = `{"type":"object","properties":{"p":${schema}}}`;
    const answer = await chat(
      `"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${schema}}}]`,
    );
    expect(answer.status).toBe(200);
  });

  it('answers deep and huge admin API bodies with a 400 naming the field', async () => {
    const deep = await send('/admin/keys', `{"name":"k","metadata":{"a":${nestedObjects(5_000)}}}`);
    expect(deep.status).toBe(400);
    expect(deep.error.code).toBe('json_too_deep');
    expect(deep.error.param?.startsWith('metadata.a.a.a')).toBe(true);
    const huge = await send('/admin/keys', `{"name":"k","allowed_model_groups":${longArray(2_000_000)}}`);
    expect(huge.status).toBe(400);
    expect(huge.error.param).toBe('allowed_model_groups');
    const update = await send('/admin/keys/key_missing', `{"metadata":${nestedArrays(5_000)}}`, 'PATCH');
    expect(update.status).toBe(400);
    expect(update.error.param).toBe('metadata.[0].[0].[0].[0].[0].….[0].[0]');
  });

  it('honours server.jsonMaxDepth and server.jsonMaxElements from the config', async () => {
    const strict = createGateway({
      config: parseGatewayConfig(
        {
          server: { jsonMaxDepth: 6, jsonMaxElements: 5 },
          modelGroups: {
            fast: {
              deployments: [
                { provider: 'openai', model: 'text', baseURL: `${mock.url}/v1`, apiKey: mockUpstreamApiKey },
              ],
            },
          },
        },
        {},
      ),
      providers: builtinProviders,
      authenticator: createVirtualKeyAuthenticator({
        masterKey,
        store: createDrizzleKeyStore(database.db),
        invalidations: createLocalKeyInvalidationBus(),
        sha256,
      }),
    });
    const post = async (fields: string) => {
      const response = await strict.request('/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
        body: `{"model":"fast","messages":[{"role":"user","content":"hi"}],${fields}}`,
      });
      return { status: response.status, body: (await response.json()) as { error?: { param: string } } };
    };
    // The body is level 1 and `extra`'s array level 2: five nested arrays reach level 6, six are one level too many.
    expect((await post(`"extra":${nestedArrays(5)}`)).status).toBe(200);
    expect(await post(`"extra":${nestedArrays(6)}`)).toMatchObject({
      status: 400,
      body: { error: { param: 'extra.[0].[0].[0].[0].[0]' } },
    });
    expect((await post(`"extra":${longArray(5)}`)).status).toBe(200);
    expect(await post(`"extra":${longArray(6)}`)).toMatchObject({ status: 400, body: { error: { param: 'extra' } } });
  });

  it('keeps serving after all of that', async () => {
    const response = await gateway.request('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    const created = await gateway.request('/admin/keys', {
      method: 'POST',
      headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'after', metadata: { team: 'a' } }),
    });
    expect(created.status).toBe(201);
  });
});
