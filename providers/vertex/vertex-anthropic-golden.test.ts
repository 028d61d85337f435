import { describe, expect, it } from 'vitest';
import { fixtureReader, testProvider } from '../../tests/conformance/provider-suite.ts';
import { vertexAnthropicTranslator } from './vertex-anthropic-translator.ts';

/**
 * Golden tests of Claude on Vertex over `__fixtures__/anthropic/`, through the provider seam's conformance suite, then
 * the values particular to these fixtures (both error envelopes Vertex answers Claude requests with).
 */

const fixtures = new URL('./__fixtures__/anthropic/', import.meta.url);
const { json: readJsonFixture } = fixtureReader(fixtures);
const retryAfter = { 'retry-after': '20' };

testProvider({
  translator: vertexAnthropicTranslator,
  fixtures,
  snapshots: new URL('./__snapshots__/anthropic/', import.meta.url),
  model: 'claude-sonnet-4-5@20250929',
  chat: ['text', 'tools'],
  errors: [
    {
      fixture: 'error-400',
      upstreamStatus: 400,
      status: 400,
      type: 'invalid_request_error',
      code: null,
      retryable: false,
    },
    {
      fixture: 'error-400-failed-precondition',
      upstreamStatus: 400,
      status: 502,
      type: 'upstream_error',
      code: 'FAILED_PRECONDITION',
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
    {
      fixture: 'error-529',
      upstreamStatus: 529,
      headers: retryAfter,
      status: 503,
      type: 'upstream_error',
      code: 'upstream_overloaded',
      retryable: true,
    },
  ],
});

describe('Claude on Vertex fixtures', () => {
  it('tools: both parallel calls, with cache reads counted as input', () => {
    const response = vertexAnthropicTranslator.parseChatResponse(readJsonFixture('tools.json'));
    expect(response.choices[0]?.toolCalls.map((call) => JSON.parse(call.arguments) as unknown)).toEqual([
      { location: 'Paris, France', unit: 'celsius' },
      { location: 'Berlin, Germany', unit: 'celsius' },
    ]);
    expect(response.usage).toMatchObject({ inputTokens: 412 + 1280, cachedInputTokens: 1280, outputTokens: 121 });
  });

  it("a Google-envelope 429 passes Vertex's retry-after on", () => {
    const error = vertexAnthropicTranslator.mapError(429, readJsonFixture('error-429.json'), new Headers(retryAfter));
    expect(error.headers).toEqual(retryAfter);
    expect(error.message).toContain('Quota exceeded for aiplatform.googleapis.com');
  });
});
