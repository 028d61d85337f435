import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CanonicalChatRequest } from '../../src/canonical/index.ts';
import { isGatewayError } from '../../src/errors.ts';
import { buildVertexEmbeddingsRequest, parseVertexEmbeddingsResponse } from './vertex-embeddings.ts';
import { buildVertexGeminiChatRequest } from './vertex-gemini-request.ts';
import { vertexGeminiTranslator } from './vertex-gemini-translator.ts';
import {
  generateTestKeyPair,
  startTestTokenEndpoint,
  testServiceAccount,
  vertexTestTarget,
  type TestTokenEndpoint,
  type TestKeyPair,
} from '../../tests/support/vertex-test-support.ts';

const base =
  'https://us-central1-aiplatform.googleapis.com/v1/projects/my-project/locations/us-central1/publishers/google/models';

function chatRequest(overrides: Partial<CanonicalChatRequest> = {}): CanonicalChatRequest {
  return {
    model: 'flash',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
    ],
    stream: false,
    streamIncludeUsage: false,
    ...overrides,
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('buildVertexGeminiChatRequest', () => {
  it("sends the Gemini body to :generateContent with the bearer token and Vertex's labels", async () => {
    const upstream = await buildVertexGeminiChatRequest(
      chatRequest({ maxTokens: 100, temperature: 0.2 }),
      vertexTestTarget('gemini-2.5-flash', { labels: { team: 'search', env: 'prod' } }),
    );
    expect(upstream.url).toBe(`${base}/gemini-2.5-flash:generateContent`);
    expect(upstream.headers).toEqual({ 'content-type': 'application/json', authorization: 'Bearer ya29.test-token' });
    expect(JSON.parse(upstream.body ?? '')).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hello' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { temperature: 0.2, maxOutputTokens: 100 },
      labels: { team: 'search', env: 'prod' },
    });
  });

  it('streams through :streamGenerateContent?alt=sse, on the global host for location global', async () => {
    const upstream = await buildVertexGeminiChatRequest(
      chatRequest({ stream: true }),
      vertexTestTarget('gemini-2.5-pro', { location: 'global' }),
    );
    expect(upstream.url).toBe(
      'https://aiplatform.googleapis.com/v1/projects/my-project/locations/global/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
    );
  });

  it('reads the Gemini options (safety settings) from the same deployment options', async () => {
    const safetySettings = [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }];
    const upstream = await buildVertexGeminiChatRequest(
      chatRequest(),
      vertexTestTarget('gemini-2.5-flash', { safetySettings }),
    );
    expect(JSON.parse(upstream.body ?? '')).toMatchObject({ safetySettings });
  });

  it('refuses a Claude model with a 500 naming the vertex-anthropic provider', async () => {
    const error = await rejection(
      buildVertexGeminiChatRequest(chatRequest(), vertexTestTarget('claude-opus-4-1@20250805')),
    );
    expect(isGatewayError(error) && error).toMatchObject({ status: 500, code: 'invalid_provider_options' });
    expect(isGatewayError(error) && error.message).toContain('vertex-anthropic');
  });

  it('keeps the Gemini body’s refusals (a tool_choice naming no tool)', async () => {
    const error = await rejection(
      buildVertexGeminiChatRequest(
        chatRequest({
          tools: [{ name: 'a', parameters: { type: 'object' } }],
          toolChoice: { type: 'tool', name: 'b' },
        }),
        vertexTestTarget('gemini-2.5-flash'),
      ),
    );
    expect(isGatewayError(error) && error).toMatchObject({ status: 400, param: 'tool_choice' });
  });
});

describe('the Vertex translators with a service account', () => {
  let keys: TestKeyPair;
  let endpoint: TestTokenEndpoint;
  beforeAll(async () => {
    keys = generateTestKeyPair();
    endpoint = await startTestTokenEndpoint(keys.publicKey);
  });
  afterAll(async () => {
    await endpoint.close();
  });

  it('signs, exchanges and reuses one token across chat and embeddings requests', async () => {
    const target = vertexTestTarget('gemini-2.5-flash', {
      accessToken: undefined,
      serviceAccount: testServiceAccount(keys, 'translator@test-project.iam.gserviceaccount.com', endpoint.url),
    });
    const chat = await vertexGeminiTranslator.buildChatRequest(chatRequest(), target);
    const embeddings = await vertexGeminiTranslator.buildEmbeddingsRequest?.(
      { model: 'e', input: ['hi'] },
      {
        ...target,
        model: 'text-embedding-005',
      },
    );
    expect(endpoint.received).toHaveLength(1);
    expect(endpoint.received[0]?.signatureValid).toBe(true);
    expect(chat.headers.authorization).toBe('Bearer token-1');
    expect(embeddings?.headers.authorization).toBe('Bearer token-1');
  });
});

describe('Vertex text embeddings', () => {
  it('builds :predict with one instance per input, dimensions and the task type', async () => {
    const upstream = await buildVertexEmbeddingsRequest(
      { model: 'embed', input: ['first', 'second'], dimensions: 256, user: 'u1' },
      vertexTestTarget('text-embedding-005', { embeddingTaskType: 'RETRIEVAL_DOCUMENT' }),
    );
    expect(upstream.url).toBe(`${base}/text-embedding-005:predict`);
    expect(JSON.parse(upstream.body ?? '')).toEqual({
      instances: [
        { content: 'first', task_type: 'RETRIEVAL_DOCUMENT' },
        { content: 'second', task_type: 'RETRIEVAL_DOCUMENT' },
      ],
      parameters: { outputDimensionality: 256 },
    });
  });

  it('refuses token-id input with a 400 naming it', async () => {
    const error = await rejection(
      buildVertexEmbeddingsRequest({ model: 'embed', input: [[1, 2, 3]] }, vertexTestTarget('text-embedding-005')),
    );
    expect(isGatewayError(error) && error).toMatchObject({ status: 400, param: 'input.[0]' });
  });

  it('reads predictions without statistics as no usage, and a malformed body as a 502', () => {
    expect(parseVertexEmbeddingsResponse({ predictions: [{ embeddings: { values: [0.5] } }] })).toEqual({
      model: '',
      data: [{ index: 0, embedding: [0.5] }],
      usage: undefined,
    });
    let thrown: unknown;
    try {
      parseVertexEmbeddingsResponse({ predictions: [{ embeddings: { values: 'nope' } }] });
    } catch (error) {
      thrown = error;
    }
    expect(isGatewayError(thrown) && thrown).toMatchObject({ status: 502, code: 'upstream_invalid_response' });
  });
});
