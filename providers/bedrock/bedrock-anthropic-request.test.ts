import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CanonicalChatRequest, UpstreamRequest, UpstreamTarget } from '../../src/canonical/index.ts';
import { isGatewayError } from '../../src/errors.ts';
import {
  bedrockAnthropicVersion,
  buildBedrockAnthropicChatRequest,
  buildBedrockAnthropicNativeRequest,
  parseAnthropicBetaHeader,
  toBedrockAnthropicBody,
} from './bedrock-anthropic-request.ts';
import { authorizeBedrockRequest } from './bedrock-signing.ts';

const claude = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const endpoint = 'https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0';
const keys = { region: 'us-east-1', accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };

const chat = (overrides: Partial<CanonicalChatRequest> = {}): CanonicalChatRequest => ({
  model: 'group',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
  ],
  stream: false,
  streamIncludeUsage: false,
  ...overrides,
});
const target = (overrides: Partial<UpstreamTarget> = {}): UpstreamTarget => ({
  providerName: 'bedrock-anthropic',
  baseURL: '',
  model: claude,
  apiKey: undefined,
  headers: {},
  options: keys,
  ...overrides,
});
const sentBody = (request: UpstreamRequest): unknown => JSON.parse(request.body ?? '');

/** The signature of `request`'s URL, unsigned headers and body, made again at the same (frozen) time. */
async function signedAgain(request: UpstreamRequest): Promise<string | undefined> {
  const { authorization: _authorization, 'x-amz-date': _date, ...unsigned } = request.headers;
  const again = await authorizeBedrockRequest(
    { url: request.url, headers: unsigned, body: request.body ?? '' },
    { kind: 'sigv4', accessKeyId: keys.accessKeyId, secretAccessKey: keys.secretAccessKey, region: keys.region },
  );
  return again.headers.authorization;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2025-10-01T12:00:00Z'));
});
afterEach(() => {
  vi.useRealTimers();
});

describe('buildBedrockAnthropicChatRequest', () => {
  it("sends Anthropic's Messages body to invoke, without model or stream, with Bedrock's anthropic_version", async () => {
    const upstream = await buildBedrockAnthropicChatRequest(chat({ maxTokens: 300, temperature: 0.5 }), target());

    expect(upstream.url).toBe(`${endpoint}/invoke`);
    expect(upstream.method).toBe('POST');
    expect(sentBody(upstream)).toEqual({
      anthropic_version: bedrockAnthropicVersion,
      max_tokens: 300,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      temperature: 0.5,
    });
    expect(upstream.headers['content-type']).toBe('application/json');
    expect(upstream.headers.accept).toBe('application/json');
    expect(upstream.headers['x-api-key']).toBeUndefined();
    expect(upstream.headers['anthropic-version']).toBeUndefined();
    expect(upstream.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20251001\/us-east-1\/bedrock\/aws4_request, /,
    );
    expect(upstream.headers['x-amz-date']).toBe('20251001T120000Z');
  });

  it('streams through invoke-with-response-stream, asking for an event stream of JSON chunks', async () => {
    const upstream = await buildBedrockAnthropicChatRequest(chat({ stream: true }), target());

    expect(upstream.url).toBe(`${endpoint}/invoke-with-response-stream`);
    expect(upstream.headers.accept).toBe('application/vnd.amazon.eventstream');
    expect(upstream.headers['x-amzn-bedrock-accept']).toBe('application/json');
    const body = sentBody(upstream) as Record<string, unknown>;
    expect(body.stream).toBeUndefined();
    expect(body).toMatchObject({ anthropic_version: bedrockAnthropicVersion, max_tokens: 4096 });
  });

  it('signs the exact body it sends', async () => {
    const upstream = await buildBedrockAnthropicChatRequest(chat(), target());
    expect(await signedAgain(upstream)).toBe(upstream.headers.authorization);

    const tampered = { ...upstream, body: upstream.body?.replace('Hello', 'Hellp') };
    expect(await signedAgain(tampered)).not.toBe(upstream.headers.authorization);
  });

  it("turns a configured anthropic-beta header into anthropic_beta and signs the config's other headers", async () => {
    const upstream = await buildBedrockAnthropicChatRequest(
      chat(),
      target({
        headers: {
          'Anthropic-Beta': 'context-1m-2025-08-07, interleaved-thinking-2025-05-14',
          'X-Amzn-Bedrock-GuardrailIdentifier': 'gr-123',
          'anthropic-version': '2023-06-01',
        },
      }),
    );

    expect(sentBody(upstream)).toMatchObject({
      anthropic_beta: ['context-1m-2025-08-07', 'interleaved-thinking-2025-05-14'],
    });
    expect(upstream.headers['anthropic-beta']).toBeUndefined();
    expect(upstream.headers['anthropic-version']).toBeUndefined();
    expect(upstream.headers['x-amzn-bedrock-guardrailidentifier']).toBe('gr-123');
    expect(upstream.headers.authorization).toContain('x-amzn-bedrock-guardrailidentifier');
  });

  it('keeps what the Anthropic builder translates: thinking, tools and the JSON tool', async () => {
    const upstream = await buildBedrockAnthropicChatRequest(
      chat({
        reasoningEffort: 'low',
        tools: [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
        toolChoice: { type: 'auto' },
        topK: 5,
      }),
      target({ options: { ...keys, defaultMaxTokens: 1000 } }),
    );

    expect(sentBody(upstream)).toMatchObject({
      max_tokens: 1000 + 2048,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      tools: [{ name: 'get_weather', input_schema: { type: 'object' } }],
      tool_choice: { type: 'auto' },
      top_k: 5,
    });
  });

  it("sends a Bedrock API key as a bearer token, to the config's base URL", async () => {
    const upstream = await buildBedrockAnthropicChatRequest(
      chat(),
      target({
        apiKey: 'ABSK123',
        baseURL: 'https://vpce-1.bedrock-runtime.us-west-2.vpce.amazonaws.com/',
        options: {},
      }),
    );
    expect(upstream.url).toBe(
      'https://vpce-1.bedrock-runtime.us-west-2.vpce.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke',
    );
    expect(upstream.headers.authorization).toBe('Bearer ABSK123');
    expect(upstream.headers['x-amz-date']).toBeUndefined();
  });

  it('refuses images by URL (Claude on Bedrock takes base64 only) and keeps data: URLs', async () => {
    const withImage = (url: string) =>
      chat({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is it?' },
              { type: 'image', url },
            ],
          },
        ],
      });

    const refused = await buildBedrockAnthropicChatRequest(withImage('https://example.com/cat.png'), target()).catch(
      (error: unknown) => error,
    );
    expect(isGatewayError(refused) && refused.status).toBe(400);
    expect(isGatewayError(refused) && refused.param).toBe('messages.[0].content.[1]');

    const inline = await buildBedrockAnthropicChatRequest(withImage('data:image/png;base64,iVBORw0KGgo='), target());
    expect(sentBody(inline)).toMatchObject({
      messages: [
        {
          content: [
            { type: 'text' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
      ],
    });
  });

  it("refuses what Anthropic's builder refuses", async () => {
    await expect(buildBedrockAnthropicChatRequest(chat({ temperature: 1.5 }), target())).rejects.toMatchObject({
      status: 400,
      param: 'temperature',
    });
  });

  it('is a configuration error without credentials', async () => {
    await expect(
      buildBedrockAnthropicChatRequest(chat(), target({ options: { region: 'us-east-1' } })),
    ).rejects.toMatchObject({ status: 500, code: 'invalid_provider_options' });
  });
});

describe('buildBedrockAnthropicNativeRequest', () => {
  const clientBody = {
    model: claude,
    max_tokens: 1024,
    system: [{ type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } }],
    messages: [{ role: 'user', content: 'Hi' }],
    metadata: { user_id: 'user_1' },
    thinking: { type: 'enabled', budget_tokens: 2000 },
  };

  it("moves the body's model into the URL and leaves the rest of the client's body as it was", async () => {
    const upstream = await buildBedrockAnthropicNativeRequest('anthropic-messages', clientBody, target(), {
      'anthropic-version': '2023-06-01',
    });

    expect(upstream.url).toBe(`${endpoint}/invoke`);
    const { model: _model, ...rest } = clientBody;
    expect(sentBody(upstream)).toEqual({ ...rest, anthropic_version: bedrockAnthropicVersion });
    expect(upstream.headers['anthropic-version']).toBeUndefined();
    expect(await signedAgain(upstream)).toBe(upstream.headers.authorization);
  });

  it('streams when the body asks, and carries the beta header as anthropic_beta', async () => {
    const upstream = await buildBedrockAnthropicNativeRequest(
      'anthropic-messages',
      { ...clientBody, stream: true },
      target(),
      { 'anthropic-beta': 'interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14' },
    );

    expect(upstream.url).toBe(`${endpoint}/invoke-with-response-stream`);
    expect(upstream.headers.accept).toBe('application/vnd.amazon.eventstream');
    const body = sentBody(upstream) as Record<string, unknown>;
    expect(body.stream).toBeUndefined();
    expect(body.model).toBeUndefined();
    expect(body.anthropic_beta).toEqual(['interleaved-thinking-2025-05-14', 'fine-grained-tool-streaming-2025-05-14']);
    expect(upstream.headers['anthropic-beta']).toBeUndefined();
  });

  it("lets the config's anthropic-beta replace the client's", async () => {
    const upstream = await buildBedrockAnthropicNativeRequest(
      'anthropic-messages',
      clientBody,
      target({ headers: { 'anthropic-beta': 'context-1m-2025-08-07' } }),
      { 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
    );
    expect((sentBody(upstream) as Record<string, unknown>).anthropic_beta).toEqual(['context-1m-2025-08-07']);
  });

  it("falls back to the deployment's model when the body names none", async () => {
    const { model: _model, ...withoutModel } = clientBody;
    const upstream = await buildBedrockAnthropicNativeRequest(
      'anthropic-messages',
      withoutModel,
      target({ model: 'anthropic.claude-haiku-4-5-20251001-v1:0' }),
    );
    expect(upstream.url).toBe(
      'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-haiku-4-5-20251001-v1%3A0/invoke',
    );
  });

  it('serves Messages only', async () => {
    await expect(buildBedrockAnthropicNativeRequest('anthropic-count-tokens', clientBody, target())).rejects.toThrow(
      'bedrock-anthropic cannot pass through anthropic-count-tokens',
    );
  });
});

describe('toBedrockAnthropicBody', () => {
  it("adds the header's betas to the body's own, each once, and keeps a version the body sets", () => {
    expect(
      toBedrockAnthropicBody(
        {
          model: 'claude',
          anthropic_version: 'bedrock-2023-05-31',
          anthropic_beta: ['context-1m-2025-08-07'],
          max_tokens: 10,
          messages: [],
          stream: false,
        },
        ['context-1m-2025-08-07', 'interleaved-thinking-2025-05-14'],
      ),
    ).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['context-1m-2025-08-07', 'interleaved-thinking-2025-05-14'],
      max_tokens: 10,
      messages: [],
    });
  });

  it('adds no anthropic_beta without betas', () => {
    expect(toBedrockAnthropicBody({ max_tokens: 10, messages: [] }, [])).toEqual({
      max_tokens: 10,
      messages: [],
      anthropic_version: bedrockAnthropicVersion,
    });
  });
});

describe('parseAnthropicBetaHeader', () => {
  it('splits on commas and drops blanks', () => {
    expect(parseAnthropicBetaHeader(' a-1 ,b-2,, ')).toEqual(['a-1', 'b-2']);
    expect(parseAnthropicBetaHeader(undefined)).toEqual([]);
  });
});
