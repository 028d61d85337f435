import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseJson } from '../../src/framing/index.ts';
import { reduceProviderStream, testProvider } from '../../tests/conformance/provider-suite.ts';
import { openAICompatibleTranslator } from './openai-compatible-translator.ts';

/*
 * Golden tests: every recorded fixture through the provider seam's conformance suite
 * (tests/conformance/provider-suite.ts), snapshots in __snapshots__/suite/, then the values particular to these
 * fixtures. The fixtures are read with node:fs because this test runs in the Node unit project; the code under test
 * is runtime-neutral.
 */

const translator = openAICompatibleTranslator;

function fixture(name: string): Promise<string> {
  return readFile(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');
}

async function jsonFixture(name: string): Promise<unknown> {
  const parsed = parseJson(await fixture(name));
  if (!parsed.ok) throw new Error(`${name}: ${parsed.error}`);
  return parsed.value;
}

const runStream = (body: string) => reduceProviderStream(translator, new TextEncoder().encode(body));

testProvider({
  translator,
  fixtures: new URL('./__fixtures__/', import.meta.url),
  snapshots: new URL('./__snapshots__/suite/', import.meta.url),
  chat: ['text', 'tools', 'reasoning', 'json-response'],
  jsonText: ['json-response'],
  embeddings: ['embeddings'],
  errors: [
    {
      fixture: 'error-400',
      upstreamStatus: 400,
      status: 400,
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
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
      fixture: 'error-404',
      upstreamStatus: 404,
      status: 404,
      type: 'not_found_error',
      code: 'model_not_found',
      retryable: false,
    },
    {
      fixture: 'error-429',
      upstreamStatus: 429,
      headers: { 'retry-after': '1' },
      status: 429,
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      retryable: true,
    },
    {
      fixture: 'error-429-insufficient-quota',
      upstreamStatus: 429,
      headers: { 'retry-after': '1' },
      status: 429,
      type: 'insufficient_quota',
      code: 'insufficient_quota',
      retryable: true,
    },
    { fixture: 'error-500', upstreamStatus: 500, status: 502, type: 'upstream_error', code: null, retryable: true },
    { fixture: 'error-503', upstreamStatus: 503, status: 503, type: 'upstream_error', code: null, retryable: true },
  ],
});

describe('openai-compatible golden fixtures: values', () => {
  it('text: reads the answer and the usage', async () => {
    const response = translator.parseChatResponse(await jsonFixture('text.json'));
    expect(response.choices[0]?.text).toBe('Hello! How can I help you today?');
    expect(response.choices[0]?.finishReason).toEqual({ unified: 'stop', raw: 'stop' });
    expect(response.usage).toMatchObject({
      inputTokens: 19,
      outputTokens: 10,
      totalTokens: 29,
      cachedInputTokens: 0,
      reasoningTokens: 0,
    });
    expect(response.systemFingerprint).toBe('fp_34a54ae93c');
  });

  it('tools: reads two parallel calls with complete JSON arguments and cached prompt tokens', async () => {
    const parts = runStream(await fixture('tools.chunks.txt'));
    const starts = parts.flatMap((part) => (part.type === 'tool-input-start' ? [[part.id, part.name]] : []));
    const calls = starts.map((_start, toolIndex) =>
      parts.reduce(
        (text, part) => (part.type === 'tool-input-delta' && part.toolIndex === toolIndex ? text + part.delta : text),
        '',
      ),
    );
    expect(starts).toEqual([
      ['call_Vq3nH8kLm2Xp9RtY4wZc7BdF', 'get_weather'],
      ['call_Jd5sK1fGh7Np3QwE9rTy2UiO', 'get_weather'],
    ]);
    expect(calls.map((text) => parseJson(text))).toEqual([
      { ok: true, value: { location: 'Paris, France', unit: 'celsius' } },
      { ok: true, value: { location: 'Tokyo, Japan', unit: 'celsius' } },
    ]);
    expect(parts.filter((part) => part.type === 'tool-input-delta').length).toBeGreaterThan(4);
    expect(parts.find((part) => part.type === 'usage')).toMatchObject({
      usage: { inputTokens: 1204, cachedInputTokens: 1024, outputTokens: 52 },
    });
  });

  it('reasoning: separates reasoning from the answer and counts reasoning and cached tokens', async () => {
    const response = translator.parseChatResponse(await jsonFixture('reasoning.json'));
    expect(response.choices[0]?.reasoning).toMatch(/^Comparing 9\.11 and 9\.9/);
    expect(response.choices[0]?.text).toMatch(/^9\.9 is larger\./);
    expect(response.usage).toMatchObject({
      inputTokens: 81,
      outputTokens: 96,
      totalTokens: 177,
      cachedInputTokens: 64,
      reasoningTokens: 71,
    });
  });
});

describe('openai-compatible golden fixtures: embeddings', () => {
  it('parses embeddings.json', async () => {
    const response = translator.parseEmbeddingsResponse?.(await jsonFixture('embeddings.json'));
    expect(response?.data.map((item) => [item.index, (item.embedding as number[]).length])).toEqual([
      [0, 8],
      [1, 8],
    ]);
    expect(response?.usage).toMatchObject({ inputTokens: 8, outputTokens: 0, totalTokens: 8 });
  });
});
