import { describe, expect, it } from 'vitest';
import { fixtureReader, reduceProviderStream, testProvider } from '../../tests/conformance/provider-suite.ts';
import { cohereTranslator } from './cohere-translator.ts';

/**
 * Golden tests over the recorded fixtures in `__fixtures__/`, through the provider seam's conformance suite
 * (tests/conformance/provider-suite.ts), then the values particular to Cohere's fixtures.
 */

const fixtures = new URL('./__fixtures__/', import.meta.url);
const { text: readFixture, json: readJsonFixture } = fixtureReader(fixtures);
const retryAfter = { 'retry-after': '30' };

testProvider({
  translator: cohereTranslator,
  fixtures,
  snapshots: new URL('./__snapshots__/suite/', import.meta.url),
  chat: ['text', 'tools', 'reasoning', 'json-response'],
  jsonText: ['json-response'],
  embeddings: ['embeddings'],
  errors: [
    { fixture: 'error-400', upstreamStatus: 400, status: 400, type: 'invalid_request_error', retryable: false },
    {
      fixture: 'error-401',
      upstreamStatus: 401,
      status: 502,
      type: 'upstream_error',
      code: 'upstream_authentication_failed',
      retryable: true,
    },
    { fixture: 'error-402', upstreamStatus: 402, status: 429, type: 'insufficient_quota', retryable: true },
    {
      fixture: 'error-404',
      upstreamStatus: 404,
      status: 502,
      type: 'upstream_error',
      code: 'upstream_model_not_found',
      retryable: true,
    },
    { fixture: 'error-422', upstreamStatus: 422, status: 422, type: 'invalid_request_error', retryable: false },
    {
      fixture: 'error-429',
      upstreamStatus: 429,
      headers: retryAfter,
      status: 429,
      type: 'rate_limit_error',
      retryable: true,
    },
    {
      fixture: 'error-498',
      upstreamStatus: 498,
      status: 400,
      type: 'invalid_request_error',
      code: 'content_filter',
      retryable: false,
    },
    { fixture: 'error-499', upstreamStatus: 499, status: 502, type: 'upstream_error', retryable: true },
    { fixture: 'error-500', upstreamStatus: 500, status: 502, type: 'upstream_error', retryable: true },
    {
      fixture: 'error-503',
      upstreamStatus: 503,
      headers: retryAfter,
      status: 503,
      type: 'upstream_error',
      retryable: true,
    },
  ],
});

describe('fixture values', () => {
  it('text: the ledger gets the billed units, not the processed tokens', () => {
    const response = cohereTranslator.parseChatResponse(readJsonFixture('text.json'));
    expect(response.model).toBe('');
    expect(response.choices[0]?.finishReason).toEqual({ unified: 'stop', raw: 'COMPLETE' });
    expect(response.usage).toMatchObject({ inputTokens: 5, outputTokens: 22, totalTokens: 27 });
  });

  it('tools: the tool plan is the text beside two parallel calls', () => {
    const response = cohereTranslator.parseChatResponse(readJsonFixture('tools.json'));
    const choice = response.choices[0];
    expect(choice?.text).toMatch(/^I will use the query_daily_sales_report tool/);
    expect(choice?.toolCalls.map((call) => [call.name, JSON.parse(call.arguments) as unknown])).toEqual([
      ['query_daily_sales_report', { day: '2023-09-29' }],
      ['query_product_catalog', { category: 'Electronics' }],
    ]);
    expect(choice?.finishReason).toEqual({ unified: 'tool-calls', raw: 'TOOL_CALL' });
  });

  it('tools: the stream gives tool indexes 0 and 1 with Cohere ids', () => {
    const parts = reduceProviderStream(cohereTranslator, new TextEncoder().encode(readFixture('tools.chunks.txt')));
    expect(parts.filter((part) => part.type === 'tool-input-start')).toEqual([
      {
        type: 'tool-input-start',
        choiceIndex: 0,
        toolIndex: 0,
        id: 'query_daily_sales_report_j3f0adww9pmr',
        name: 'query_daily_sales_report',
      },
      {
        type: 'tool-input-start',
        choiceIndex: 0,
        toolIndex: 1,
        id: 'query_product_catalog_c66nf11r6s8g',
        name: 'query_product_catalog',
      },
    ]);
  });

  it('reasoning: thinking is reasoning, apart from the answer', () => {
    const response = cohereTranslator.parseChatResponse(readJsonFixture('reasoning.json'));
    expect(response.choices[0]?.reasoning).toMatch(/^Alice has 3 brothers/);
    expect(response.choices[0]?.text).toBe("Alice's brother has **3 sisters**: Alice's 2 sisters and Alice herself.");
  });

  it('embeddings: vectors in input order, billed input tokens', () => {
    const parse = cohereTranslator.parseEmbeddingsResponse;
    if (parse === undefined) throw new Error('no parseEmbeddingsResponse');
    const response = parse(readJsonFixture('embeddings.json'));
    expect(response.data.map((item) => item.index)).toEqual([0, 1]);
    expect(response.usage).toMatchObject({ inputTokens: 2, outputTokens: 0, totalTokens: 2 });
  });
});
