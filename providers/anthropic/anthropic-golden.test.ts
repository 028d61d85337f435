import { describe, expect, it } from 'vitest';
import { parseJson } from '../../src/framing/index.ts';
import { fixtureReader, reduceProviderStream, testProvider } from '../../tests/conformance/provider-suite.ts';
import { anthropicTranslator } from './anthropic-translator.ts';

/**
 * Golden tests over the recorded fixtures in `__fixtures__/`, through the provider seam's conformance suite
 * (tests/conformance/provider-suite.ts), then the values particular to Anthropic's fixtures.
 */

const fixtures = new URL('./__fixtures__/', import.meta.url);
const { text: readFixture, json: readJsonFixture } = fixtureReader(fixtures);
const retryAfter = { 'retry-after': '30' };

testProvider({
  translator: anthropicTranslator,
  fixtures,
  snapshots: new URL('./__snapshots__/suite/', import.meta.url),
  chat: ['text', 'tools', 'thinking', 'json-response'],
  jsonText: ['json-response'],
  errors: [
    { fixture: 'error-400', upstreamStatus: 400, status: 400, type: 'invalid_request_error', retryable: false },
    { fixture: 'error-401', upstreamStatus: 401, status: 502, type: 'upstream_error', retryable: true },
    { fixture: 'error-404', upstreamStatus: 404, status: 502, type: 'upstream_error', retryable: true },
    {
      fixture: 'error-429',
      upstreamStatus: 429,
      headers: retryAfter,
      status: 429,
      type: 'rate_limit_error',
      retryable: true,
    },
    { fixture: 'error-500', upstreamStatus: 500, status: 502, type: 'upstream_error', retryable: true },
    {
      fixture: 'error-529',
      upstreamStatus: 529,
      headers: retryAfter,
      status: 503,
      type: 'upstream_error',
      retryable: true,
    },
  ],
});

/** JSON text compared by value: a stream's partial JSON keeps Anthropic's spacing, the response is re-serialised. */
function jsonValue(text: string | null): unknown {
  if (text === null) return null;
  const parsed = parseJson(text);
  if (!parsed.ok) throw new Error(`not JSON: ${text}`);
  return parsed.value;
}

describe('fixture values', () => {
  it('text: cache reads count as input tokens', () => {
    const response = anthropicTranslator.parseChatResponse(readJsonFixture('text.json'));
    expect(response.choices[0]?.text).toBe(
      "Hello! I'm Claude, an AI assistant made by Anthropic. How can I help you today?",
    );
    expect(response.usage).toMatchObject({
      inputTokens: 21 + 1834,
      outputTokens: 24,
      totalTokens: 1879,
      cachedInputTokens: 1834,
      cacheWriteInputTokens: 0,
    });
  });

  it('tools: two calls, tool indexes 0 and 1 though they are content blocks 1 and 2', () => {
    const parts = reduceProviderStream(anthropicTranslator, new TextEncoder().encode(readFixture('tools.chunks.txt')));
    const starts = parts.filter((part) => part.type === 'tool-input-start');
    expect(starts).toEqual([
      {
        type: 'tool-input-start',
        choiceIndex: 0,
        toolIndex: 0,
        id: 'toolu_01A09q90qw90lq917835lq9',
        name: 'get_weather',
      },
      {
        type: 'tool-input-start',
        choiceIndex: 0,
        toolIndex: 1,
        id: 'toolu_01Wv8Vfz9Xk3mTqHr2sLbN4p',
        name: 'get_weather',
      },
    ]);
    const response = anthropicTranslator.parseChatResponse(readJsonFixture('tools.json'));
    expect(response.choices[0]?.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_use' });
    expect(response.usage).toMatchObject({
      inputTokens: 389 + 1502,
      cacheWriteInputTokens: 1502,
      cachedInputTokens: 0,
    });
  });

  it('thinking: reasoning apart from the text', () => {
    const [choice] = anthropicTranslator.parseChatResponse(readJsonFixture('thinking.json')).choices;
    expect(choice?.reasoning).toBe('The user wants 27 * 453. 27 * 453 = 27 * 400 + 27 * 53 = 10800 + 1431 = 12231.');
    expect(choice?.text).toBe('27 × 453 = 12,231');
  });

  it('json-response: the forced JSON tool is the answer text', () => {
    const [choice] = anthropicTranslator.parseChatResponse(readJsonFixture('json-response.json')).choices;
    expect(jsonValue(choice?.text ?? null)).toEqual({ city: 'Paris', country: 'France', population: 2102650 });
    expect(choice?.toolCalls).toEqual([]);
    expect(choice?.finishReason).toEqual({ unified: 'stop', raw: 'tool_use' });
  });
});
