import { describe, expect, it } from 'vitest';
import { fixtureReader, reduceProviderStream, testProvider } from '../../tests/conformance/provider-suite.ts';
import { decodeToolCallId } from './gemini-tool-call-id.ts';
import { geminiTranslator } from './gemini-translator.ts';

/**
 * Golden tests over the recorded fixtures in `__fixtures__/` (see its README for the documentation each follows),
 * through the provider seam's conformance suite (tests/conformance/provider-suite.ts), then the values particular to
 * Gemini's fixtures.
 */

const fixtures = new URL('./__fixtures__/', import.meta.url);
const { text: readFixture, json: readJsonFixture } = fixtureReader(fixtures);

testProvider({
  translator: geminiTranslator,
  fixtures,
  snapshots: new URL('./__snapshots__/suite/', import.meta.url),
  chat: ['text', 'tools', 'reasoning', 'json-response', 'safety', 'prompt-blocked'],
  jsonText: ['json-response'],
  embeddings: ['embeddings'],
  model: 'gemini-2.5-flash',
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
      fixture: 'error-400-api-key-invalid',
      upstreamStatus: 400,
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
      status: 429,
      type: 'rate_limit_error',
      code: 'RESOURCE_EXHAUSTED',
      retryable: true,
    },
    {
      fixture: 'error-500',
      upstreamStatus: 500,
      status: 502,
      type: 'upstream_error',
      code: 'INTERNAL',
      retryable: true,
    },
    {
      fixture: 'error-503',
      upstreamStatus: 503,
      status: 503,
      type: 'upstream_error',
      code: 'UNAVAILABLE',
      retryable: true,
    },
  ],
});

describe('gemini fixtures, particular values', () => {
  const streamOf = (name: string) =>
    reduceProviderStream(geminiTranslator, new TextEncoder().encode(readFixture(`${name}.chunks.txt`)));

  it('keeps the first parallel call thought signature in its id, byte for byte, and none on the second', () => {
    const body = readJsonFixture('tools.json') as {
      candidates: [{ content: { parts: [{ thoughtSignature: string }, unknown] } }];
    };
    const signature = body.candidates[0].content.parts[0].thoughtSignature;
    const [choice] = geminiTranslator.parseChatResponse(body).choices;
    const [first, second] = choice?.toolCalls ?? [];
    expect(decodeToolCallId(first?.id ?? '')).toEqual({
      id: 'call_kFXTaOu2NcGwz7IP2reZsQg_0_0',
      thoughtSignature: signature,
      generated: true,
    });
    expect(second?.id).toBe('call_kFXTaOu2NcGwz7IP2reZsQg_0_1');
    expect(first?.id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(choice?.finishReason).toEqual({ unified: 'tool-calls', raw: 'STOP' });
  });

  it('counts thinking in the output tokens, as Google bills it', () => {
    const { usage } = geminiTranslator.parseChatResponse(readJsonFixture('reasoning.json'));
    expect(usage).toMatchObject({ inputTokens: 14, outputTokens: 21 + 391, totalTokens: 426, reasoningTokens: 391 });
  });

  it('answers thought parts as reasoning, not text', () => {
    const [choice] = geminiTranslator.parseChatResponse(readJsonFixture('reasoning.json')).choices;
    expect(choice?.text).toBe('9.9 is larger than 9.11. Written with two decimals, 9.90 > 9.11.');
    expect(choice?.reasoning).toContain('**Weighing the comparison**');
    expect(streamOf('reasoning').filter((part) => part.type === 'reasoning-delta')).toHaveLength(2);
  });

  it('answers a blocked prompt as an empty choice finished by content-filter, streamed and not', () => {
    const [choice] = geminiTranslator.parseChatResponse(readJsonFixture('prompt-blocked.json')).choices;
    expect(choice).toEqual({
      index: 0,
      text: null,
      toolCalls: [],
      finishReason: { unified: 'content-filter', raw: 'PROHIBITED_CONTENT' },
    });
    expect(streamOf('prompt-blocked')).toContainEqual({
      type: 'finish',
      choiceIndex: 0,
      finishReason: { unified: 'content-filter', raw: 'PROHIBITED_CONTENT' },
    });
  });

  it('answers a withheld answer (finishReason SAFETY) as content-filter', () => {
    const [choice] = geminiTranslator.parseChatResponse(readJsonFixture('safety.json')).choices;
    expect(choice?.finishReason).toEqual({ unified: 'content-filter', raw: 'SAFETY' });
    expect(choice?.text).toBeNull();
  });

  it('reports no embeddings usage, which Gemini does not send', () => {
    const response = geminiTranslator.parseEmbeddingsResponse?.(readJsonFixture('embeddings.json'));
    expect(response?.usage).toBeUndefined();
    expect(response?.data.map((item) => item.index)).toEqual([0, 1]);
  });
});
