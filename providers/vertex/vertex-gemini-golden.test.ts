import { describe, expect, it } from 'vitest';
import { fixtureReader, reduceProviderStream, testProvider } from '../../tests/conformance/provider-suite.ts';
import { vertexGeminiTranslator } from './vertex-gemini-translator.ts';

/**
 * Golden tests of Gemini on Vertex over `__fixtures__/gemini/`, through the provider seam's conformance suite, then
 * the values particular to these fixtures.
 */

const fixtures = new URL('./__fixtures__/gemini/', import.meta.url);
const { text: readFixture, json: readJsonFixture } = fixtureReader(fixtures);
const retryAfter = { 'retry-after': '15' };

testProvider({
  translator: vertexGeminiTranslator,
  fixtures,
  snapshots: new URL('./__snapshots__/gemini/', import.meta.url),
  model: 'gemini-2.5-flash',
  chat: ['text', 'tools'],
  embeddings: ['embeddings'],
  errors: [
    {
      fixture: 'error-400',
      upstreamStatus: 400,
      status: 400,
      type: 'invalid_request_error',
      code: 'INVALID_ARGUMENT',
      retryable: false,
    },
    {
      fixture: 'error-401',
      upstreamStatus: 401,
      status: 502,
      type: 'upstream_error',
      code: 'upstream_authentication_failed',
      retryable: true,
    },
    {
      fixture: 'error-403',
      upstreamStatus: 403,
      status: 502,
      type: 'upstream_error',
      code: 'upstream_authentication_failed',
      retryable: true,
    },
    {
      fixture: 'error-404',
      upstreamStatus: 404,
      status: 502,
      type: 'upstream_error',
      code: 'upstream_model_not_found',
      retryable: true,
    },
    {
      fixture: 'error-429',
      upstreamStatus: 429,
      headers: retryAfter,
      status: 429,
      type: 'rate_limit_error',
      code: 'RESOURCE_EXHAUSTED',
      retryable: true,
    },
    { fixture: 'error-500', upstreamStatus: 500, status: 502, type: 'upstream_error', retryable: true },
    { fixture: 'error-503', upstreamStatus: 503, status: 503, type: 'upstream_error', retryable: true },
  ],
});

describe('Gemini on Vertex fixtures', () => {
  it('text: thinking tokens are output and reasoning tokens', () => {
    const response = vertexGeminiTranslator.parseChatResponse(readJsonFixture('text.json'));
    expect(response.id).toBe('7pTdaPXRG4Tq2PgPkNWf0AQ');
    expect(response.usage).toMatchObject({
      inputTokens: 5,
      outputTokens: 17 + 36,
      totalTokens: 58,
      reasoningTokens: 36,
    });
  });

  it('tools: two parallel calls, streamed and not, named alike, the thought signature kept on the first', () => {
    const response = vertexGeminiTranslator.parseChatResponse(readJsonFixture('tools.json'));
    const [choice] = response.choices;
    expect(choice?.finishReason).toEqual({ unified: 'tool-calls', raw: 'STOP' });
    expect(choice?.toolCalls.map((call) => JSON.parse(call.arguments) as unknown)).toEqual([
      { location: 'Paris, France', unit: 'celsius' },
      { location: 'Berlin, Germany', unit: 'celsius' },
    ]);
    expect(choice?.toolCalls[0]?.id).toMatch(/^call_c5XdaKqNNaLu2PgPxIOsgQ0_0_0__thought__/);
    const streamed = reduceProviderStream(
      vertexGeminiTranslator,
      new TextEncoder().encode(readFixture('tools.chunks.txt')),
    );
    const starts = streamed.flatMap((part) => (part.type === 'tool-input-start' ? [part.id] : []));
    expect(starts).toEqual(choice?.toolCalls.map((call) => call.id));
  });

  it('embeddings: one vector per input, token counts summed', () => {
    const parse = vertexGeminiTranslator.parseEmbeddingsResponse;
    const response = parse?.(readJsonFixture('embeddings.json'));
    expect(response?.data.map((item) => item.index)).toEqual([0, 1]);
    expect(response?.usage).toMatchObject({ inputTokens: 15, outputTokens: 0, totalTokens: 15 });
  });

  it('an error chunk mid-stream is thrown as the Vertex error it maps to', () => {
    const state = vertexGeminiTranslator.chatStream.init();
    const data = {
      error: { code: 429, message: 'Resource exhausted. Please try again later.', status: 'RESOURCE_EXHAUSTED' },
    };
    let thrown: unknown;
    try {
      vertexGeminiTranslator.chatStream.onEvent(state, { type: undefined, data });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ status: 429, type: 'rate_limit_error', provider: 'vertex' });
  });
});
