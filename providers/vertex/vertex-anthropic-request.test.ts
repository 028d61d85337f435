import { describe, expect, it } from 'vitest';
import type { CanonicalChatRequest } from '../../src/canonical/index.ts';
import { isGatewayError } from '../../src/errors.ts';
import {
  buildVertexAnthropicChatRequest,
  buildVertexAnthropicNativeRequest,
  buildVertexAnthropicNativeRequestWithCredentials,
  defaultVertexAnthropicVersion,
} from './vertex-anthropic-request.ts';
import { vertexAnthropicTranslator } from './vertex-anthropic-translator.ts';
import { vertexTestTarget } from '../../tests/support/vertex-test-support.ts';

const claude = 'claude-sonnet-4-5@20250929';
const regionalBase =
  'https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/anthropic/models';

function chatRequest(overrides: Partial<CanonicalChatRequest> = {}): CanonicalChatRequest {
  return {
    model: 'claude',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
    ],
    stream: false,
    streamIncludeUsage: false,
    ...overrides,
  };
}

const target = (options: Record<string, unknown> = {}) =>
  vertexTestTarget(claude, { location: 'us-east5', ...options });

describe('buildVertexAnthropicChatRequest', () => {
  it("builds Anthropic's Messages body without model, with anthropic_version, to :rawPredict", async () => {
    const upstream = await buildVertexAnthropicChatRequest(chatRequest({ maxTokens: 300, temperature: 0.5 }), target());

    expect(upstream.url).toBe(`${regionalBase}/${claude}:rawPredict`);
    expect(upstream.method).toBe('POST');
    expect(upstream.headers).toEqual({
      'content-type': 'application/json',
      authorization: 'Bearer ya29.test-token',
    });
    expect(JSON.parse(upstream.body ?? '')).toEqual({
      anthropic_version: defaultVertexAnthropicVersion,
      max_tokens: 300,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      temperature: 0.5,
    });
  });

  it('streams through :streamRawPredict with stream: true in the body', async () => {
    const upstream = await buildVertexAnthropicChatRequest(chatRequest({ stream: true }), target());
    expect(upstream.url).toBe(`${regionalBase}/${claude}:streamRawPredict`);
    expect(JSON.parse(upstream.body ?? '')).toMatchObject({ stream: true, max_tokens: 4096 });
  });

  it('uses the global host for location global and the deployment base URL when it is not Google’s', async () => {
    const global = await buildVertexAnthropicChatRequest(chatRequest(), target({ location: 'global' }));
    expect(global.url).toBe(
      `https://aiplatform.googleapis.com/v1/projects/my-project/locations/global/publishers/anthropic/models/${claude}:rawPredict`,
    );
    const mock = await buildVertexAnthropicChatRequest(chatRequest(), {
      ...target(),
      baseURL: 'http://127.0.0.1:9000/vertex',
    });
    expect(mock.url).toBe(
      `http://127.0.0.1:9000/vertex/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/${claude}:rawPredict`,
    );
  });

  it('takes anthropicVersion and defaultMaxTokens from the options, and lets config headers win', async () => {
    const upstream = await buildVertexAnthropicChatRequest(chatRequest(), {
      ...target({ anthropicVersion: 'vertex-2099-01-01', defaultMaxTokens: 1000 }),
      headers: { 'X-Goog-User-Project': 'billing-project' },
    });
    expect(JSON.parse(upstream.body ?? '')).toMatchObject({ anthropic_version: 'vertex-2099-01-01', max_tokens: 1000 });
    expect(upstream.headers['x-goog-user-project']).toBe('billing-project');
    expect(upstream.headers).not.toHaveProperty('anthropic-version');
    expect(upstream.headers).not.toHaveProperty('x-api-key');
  });

  it('carries tools and reasoning as the Anthropic translator builds them', async () => {
    const upstream = await buildVertexAnthropicChatRequest(
      chatRequest({
        tools: [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
        toolChoice: { type: 'required' },
        reasoningEffort: 'low',
      }),
      target(),
    );
    const body = JSON.parse(upstream.body ?? '') as Record<string, unknown>;
    expect(body.tools).toEqual([
      { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
    ]);
    expect(body.tool_choice).toEqual({ type: 'any' });
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  });

  it('refuses images by URL with a 400 naming the part, and sends base64 images', async () => {
    const byUrl = chatRequest({
      messages: [{ role: 'user', content: [{ type: 'image', url: 'https://example.com/cat.png' }] }],
    });
    const error: unknown = await buildVertexAnthropicChatRequest(byUrl, target()).catch((caught: unknown) => caught);
    expect(isGatewayError(error) && error).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      param: 'messages.[0].content.[0]',
    });

    const inline = chatRequest({
      messages: [{ role: 'user', content: [{ type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=' }] }],
    });
    const upstream = await buildVertexAnthropicChatRequest(inline, target());
    expect(JSON.parse(upstream.body ?? '')).toMatchObject({
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }] }],
    });
  });

  it('keeps the Anthropic translator’s refusals (temperature above 1)', async () => {
    const error: unknown = await buildVertexAnthropicChatRequest(chatRequest({ temperature: 1.5 }), target()).catch(
      (caught: unknown) => caught,
    );
    expect(isGatewayError(error) && error).toMatchObject({ status: 400, param: 'temperature' });
  });
});

describe('buildVertexAnthropicNativeRequest', () => {
  const messagesBody = { model: claude, max_tokens: 1024, messages: [{ role: 'user', content: 'Hi' }] };

  it('moves the model to the URL, adds anthropic_version and keeps anthropic-beta as a header', () => {
    const upstream = buildVertexAnthropicNativeRequest(
      'anthropic-messages',
      { ...messagesBody, stream: true },
      target(),
      { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'context-1m-2025-08-07' },
      'ya29.native',
    );
    expect(upstream.url).toBe(`${regionalBase}/${claude}:streamRawPredict`);
    expect(upstream.headers).toEqual({
      'anthropic-beta': 'context-1m-2025-08-07',
      'content-type': 'application/json',
      authorization: 'Bearer ya29.native',
    });
    expect(JSON.parse(upstream.body ?? '')).toEqual({
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      anthropic_version: defaultVertexAnthropicVersion,
    });
  });

  it('sends token counting to count-tokens:rawPredict with the model kept in the body', async () => {
    const upstream = await buildVertexAnthropicNativeRequestWithCredentials(
      'anthropic-count-tokens',
      messagesBody,
      target(),
    );
    expect(upstream.url).toBe(`${regionalBase}/count-tokens:rawPredict`);
    expect(JSON.parse(upstream.body ?? '')).toMatchObject({ model: claude, anthropic_version: 'vertex-2023-10-16' });
    expect(upstream.headers.authorization).toBe('Bearer ya29.test-token');
  });
});

describe('vertexAnthropicTranslator stream errors', () => {
  it('throws an overloaded error event as a Vertex 503', () => {
    const state = vertexAnthropicTranslator.chatStream.init();
    const data = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
    let thrown: unknown;
    try {
      vertexAnthropicTranslator.chatStream.onEvent(state, { type: 'error', data });
    } catch (error) {
      thrown = error;
    }
    expect(isGatewayError(thrown) && thrown).toMatchObject({ status: 503, provider: 'vertex', message: 'Overloaded' });
  });
});
