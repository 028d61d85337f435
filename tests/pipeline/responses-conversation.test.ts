import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinProviders } from '../../providers/index.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { createDrizzleResponseStore } from '../../src/db/drizzle-response-store.ts';
import { createGateway } from '../../src/gateway.ts';
import type { ResponseStore } from '../../src/responses/response-store.ts';
import type { UpstreamFetch, UpstreamResponse } from '../../src/services.ts';
import { createTestPglite, type TestDatabase } from '../services/test-database.ts';

const masterKey = 'sk-torii-pipeline-responses';
const chatAnswer = readFileSync(
  new URL('../../providers/openai-compatible/__fixtures__/text.json', import.meta.url),
  'utf8',
);

/** The one fake: an OpenAI-shaped chat upstream answering every call with the recorded text answer. */
function chatUpstream(calls: { url: string; body: Record<string, unknown> }[]): UpstreamFetch {
  return async (url, init) => {
    calls.push({ url, body: JSON.parse(String(init.body)) as Record<string, unknown> });
    const response: UpstreamResponse = {
      status: 200,
      ok: true,
      headers: new Headers({ 'content-type': 'application/json' }),
      contentType: 'application/json',
      body: new Response(chatAnswer).body,
      text: async () => chatAnswer,
    };
    return response;
  };
}

function gatewayWith(store: ResponseStore | undefined, calls: { url: string; body: Record<string, unknown> }[]) {
  return createGateway({
    config: parseGatewayConfig({
      modelGroups: {
        compat: {
          deployments: [{ provider: 'openai-compatible', model: 'm', baseURL: 'https://upstream.test/v1' }],
        },
      },
      server: { responseRetentionDays: 2 },
    }),
    providers: builtinProviders,
    authenticator: createMasterKeyAuthenticator(masterKey),
    services: { upstreamFetch: chatUpstream(calls), logger: { info() {}, warn() {}, error() {} } },
    ...(store === undefined ? {} : { responses: { store } }),
  });
}

async function post(gateway: ReturnType<typeof gatewayWith>, body: Record<string, unknown>) {
  const response = await gateway.request('/v1/responses', {
    method: 'POST',
    headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('the Responses conversation kept by the gateway (in process, PGlite)', { timeout: 60_000 }, () => {
  let database: TestDatabase;
  let store: ResponseStore;

  beforeAll(async () => {
    database = await createTestPglite();
    store = createDrizzleResponseStore(database.db);
  }, 60_000);

  afterAll(async () => {
    await database?.drop();
  });

  it('stores a translated response for the configured retention, and replays it as history', async () => {
    const calls: { url: string; body: Record<string, unknown> }[] = [];
    const gateway = gatewayWith(store, calls);
    const before = Date.now();
    const first = await post(gateway, { model: 'compat', input: 'Hi there', instructions: 'Be brief.' });
    expect(first.status).toBe(200);
    const stored = await store.get(String(first.body.id));
    expect(stored).toMatchObject({ native: false, keyId: null, modelGroup: 'compat', deploymentId: 'compat/0' });
    expect(stored!.expiresAt - before).toBeGreaterThanOrEqual(2 * 86_400_000 - 1_000);
    expect(stored!.expiresAt - Date.now()).toBeLessThanOrEqual(2 * 86_400_000);
    expect(stored!.inputItems).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi there' }], id: expect.any(String) },
    ]);
    const second = await post(gateway, { model: 'compat', input: 'And?', previous_response_id: first.body.id });
    expect(second.status).toBe(200);
    // The earlier turn and its answer go upstream again; the earlier instructions do not (OpenAI's rule).
    expect(calls.at(-1)?.body.messages).toEqual([
      { role: 'user', content: 'Hi there' },
      { role: 'assistant', content: 'Hello! How can I help you today?' },
      { role: 'user', content: 'And?' },
    ]);
  });

  it('stores nothing for store: false, and answers its id as unknown', async () => {
    const gateway = gatewayWith(store, []);
    const unstored = await post(gateway, { model: 'compat', input: 'Hi', store: false });
    expect(await store.get(String(unstored.body.id))).toBeUndefined();
    const continued = await post(gateway, { model: 'compat', input: 'And?', previous_response_id: unstored.body.id });
    expect(continued).toMatchObject({ status: 404, body: { error: { code: 'response_not_found' } } });
  });

  it('without a store, says store: false and refuses previous_response_id with a 400 naming it', async () => {
    const gateway = gatewayWith(undefined, []);
    const answer = await post(gateway, { model: 'compat', input: 'Hi' });
    expect(answer.body.store).toBe(false);
    const continued = await post(gateway, { model: 'compat', input: 'And?', previous_response_id: answer.body.id });
    expect(continued).toMatchObject({ status: 400, body: { error: { param: 'previous_response_id' } } });
  });

  it('answers 503 when the store fails while a conversation is looked up, and still answers when a write fails', async () => {
    const broken = await createTestPglite();
    const brokenStore = createDrizzleResponseStore(broken.db);
    await broken.drop();
    const gateway = gatewayWith(brokenStore, []);
    const continued = await post(gateway, { model: 'compat', input: 'And?', previous_response_id: 'resp_abc' });
    expect(continued).toMatchObject({ status: 503, body: { error: { code: 'response_store_unavailable' } } });
    const answered = await post(gateway, { model: 'compat', input: 'Hi' });
    expect(answered.status).toBe(200);
    const tooLong = await post(gateway, { model: 'compat', input: 'And?', previous_response_id: 'r'.repeat(10_000) });
    expect(tooLong).toMatchObject({ status: 404, body: { error: { code: 'response_not_found' } } });
  });

  it('continues a native conversation a fallback group served on that deployment, though the requested group is well again', async () => {
    const nativeAnswer = readFileSync(
      new URL('../mock-upstream/__fixtures__/responses-text.json', import.meta.url),
      'utf8',
    );
    const calls: { url: string; body: Record<string, unknown> }[] = [];
    let primaryDown = true;
    const upstreamFetch: UpstreamFetch = async (url, init) => {
      calls.push({ url, body: JSON.parse(String(init.body)) as Record<string, unknown> });
      const failing = primaryDown && url.startsWith('https://primary.test/');
      const text = failing ? '{"error":{"message":"overloaded","type":"server_error"}}' : nativeAnswer;
      const response: UpstreamResponse = {
        status: failing ? 503 : 200,
        ok: !failing,
        headers: new Headers({ 'content-type': 'application/json' }),
        contentType: 'application/json',
        body: new Response(text).body,
        text: async () => text,
      };
      return response;
    };
    const deployment = (host: string) => ({
      provider: 'openai',
      model: 'gpt-5',
      baseURL: `https://${host}/v1`,
      apiKey: 'sk-up',
    });
    const gateway = createGateway({
      config: parseGatewayConfig({
        modelGroups: {
          primary: { deployments: [deployment('primary.test')], retry: { retries: 0 }, fallbacks: ['secondary'] },
          secondary: { deployments: [deployment('secondary.test')] },
        },
      }),
      providers: builtinProviders,
      authenticator: createMasterKeyAuthenticator(masterKey),
      services: { upstreamFetch, logger: { info() {}, warn() {}, error() {} } },
      responses: { store },
    });
    const first = await post(gateway, { model: 'primary', input: 'Hi there' });
    expect(first.status).toBe(200);
    expect(calls.map((call) => new URL(call.url).host)).toEqual(['primary.test', 'secondary.test']);
    expect(await store.get(String(first.body.id))).toMatchObject({ native: true, deploymentId: 'secondary/0' });
    // The primary group is healthy again, but only the secondary's provider account knows the conversation.
    primaryDown = false;
    const second = await post(gateway, { model: 'primary', input: 'And?', previous_response_id: first.body.id });
    expect(second.status).toBe(200);
    expect(new URL(calls.at(-1)!.url).host).toBe('secondary.test');
    expect(calls.at(-1)?.body).toMatchObject({ previous_response_id: first.body.id });
  });
});
