import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  fixtureReader,
  reduceProviderStream,
  testProvider,
  type ProviderErrorCase,
} from '../../tests/conformance/provider-suite.ts';
import { awsFrame } from '../../src/framing/aws-event-stream.test-helper.ts';
import { bedrockTranslator } from './bedrock-translator.ts';

/**
 * Golden tests over the recorded fixtures in `__fixtures__/`, through the provider seam's conformance suite
 * (tests/conformance/provider-suite.ts), then the values particular to Bedrock's fixtures. Converse names no response
 * id, so the translator makes a random one: the UUID source is fixed here, as the suite fixes the clock.
 */

const fixtures = new URL('./__fixtures__/', import.meta.url);
const { json: readJsonFixture } = fixtureReader(fixtures);
/** The `x-amzn-errortype` header each error fixture comes with. */
const errorHeaders = readJsonFixture('error-headers.json') as Record<string, Record<string, string>>;
const errorCase = (fixture: string, rest: Omit<ProviderErrorCase, 'fixture' | 'headers'>): ProviderErrorCase => ({
  fixture,
  headers: errorHeaders[fixture] ?? {},
  ...rest,
});

beforeAll(() => {
  vi.spyOn(crypto, 'randomUUID').mockReturnValue('00000000-0000-4000-8000-000000000000');
});
afterAll(() => {
  vi.restoreAllMocks();
});

testProvider({
  translator: bedrockTranslator,
  fixtures,
  snapshots: new URL('./__snapshots__/suite/', import.meta.url),
  chat: ['text', 'tools', 'reasoning', 'json-response', 'guardrail'],
  jsonText: ['json-response'],
  embeddings: ['embeddings-titan', 'embeddings-cohere'],
  model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
  errors: [
    errorCase('error-400-validation', {
      upstreamStatus: 400,
      status: 400,
      type: 'invalid_request_error',
      retryable: false,
    }),
    errorCase('error-400-input-too-long', {
      upstreamStatus: 400,
      status: 400,
      type: 'invalid_request_error',
      retryable: false,
    }),
    errorCase('error-400-service-quota', {
      upstreamStatus: 400,
      status: 429,
      type: 'rate_limit_error',
      retryable: true,
    }),
    errorCase('error-403-access-denied', { upstreamStatus: 403, status: 502, type: 'upstream_error', retryable: true }),
    errorCase('error-403-signature', { upstreamStatus: 403, status: 502, type: 'upstream_error', retryable: true }),
    errorCase('error-404-resource-not-found', {
      upstreamStatus: 404,
      status: 502,
      type: 'upstream_error',
      retryable: true,
    }),
    errorCase('error-408-model-timeout', { upstreamStatus: 408, status: 504, type: 'timeout_error', retryable: true }),
    errorCase('error-424-model-error', { upstreamStatus: 424, status: 502, type: 'upstream_error', retryable: true }),
    errorCase('error-429-throttling', { upstreamStatus: 429, status: 429, type: 'rate_limit_error', retryable: true }),
    errorCase('error-429-model-not-ready', {
      upstreamStatus: 429,
      status: 429,
      type: 'rate_limit_error',
      retryable: true,
    }),
    errorCase('error-500-internal', { upstreamStatus: 500, status: 502, type: 'upstream_error', retryable: true }),
    errorCase('error-503-service-unavailable', {
      upstreamStatus: 503,
      status: 503,
      type: 'upstream_error',
      retryable: true,
    }),
  ],
});

/** The recorded stream of a case, framed as the binary messages Bedrock sends. */
function streamOf(name: string): Uint8Array {
  const events = readJsonFixture(`${name}.events.json`) as { eventType: string; payload: unknown }[];
  const frames = events.map((event) => awsFrame('event', event.eventType, JSON.stringify(event.payload)));
  const bytes = new Uint8Array(frames.reduce((total, frame) => total + frame.length, 0));
  let offset = 0;
  for (const frame of frames) {
    bytes.set(frame, offset);
    offset += frame.length;
  }
  return bytes;
}

describe('fixture values', () => {
  it('text: cache reads count as input tokens (Converse reports them apart from inputTokens)', () => {
    const response = bedrockTranslator.parseChatResponse(readJsonFixture('text.json'));
    expect(response.usage).toMatchObject({
      inputTokens: 9 + 1490,
      outputTokens: 21,
      totalTokens: 1520,
      cachedInputTokens: 1490,
      cacheWriteInputTokens: 0,
    });
  });

  it('text: the usage that follows messageStop is not lost', () => {
    const parts = reduceProviderStream(bedrockTranslator, streamOf('text'));
    expect(parts.map((part) => part.type).slice(-2)).toEqual(['finish', 'usage']);
  });

  it('tools: two calls, tool indexes 0 and 1 though they are content blocks 1 and 2', () => {
    const parts = reduceProviderStream(bedrockTranslator, streamOf('tools'));
    const starts = parts.filter((part) => part.type === 'tool-input-start');
    expect(starts).toEqual([
      {
        type: 'tool-input-start',
        choiceIndex: 0,
        toolIndex: 0,
        id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q',
        name: 'get_weather',
      },
      {
        type: 'tool-input-start',
        choiceIndex: 0,
        toolIndex: 1,
        id: 'tooluse_X0bq2N3pQ9uTm8VvYk1wZg',
        name: 'get_weather',
      },
    ]);
  });

  it('reasoning: the signature reaches the client with the reasoning', () => {
    const response = bedrockTranslator.parseChatResponse(readJsonFixture('reasoning.json'));
    expect(response.choices[0]?.reasoningSignature).toMatch(/^EqoBCkgIBxAB/);
    const end = reduceProviderStream(bedrockTranslator, streamOf('reasoning')).find(
      (part) => part.type === 'reasoning-end',
    );
    expect(end).toEqual({ type: 'reasoning-end', choiceIndex: 0, signature: response.choices[0]?.reasoningSignature });
  });

  it('json-response: the forced tool call is the answer text, finished with stop', () => {
    const response = bedrockTranslator.parseChatResponse(readJsonFixture('json-response.json'));
    expect(JSON.parse(response.choices[0]?.text ?? 'null')).toMatchObject({ name: 'Ada Lovelace', born: 1815 });
    expect(response.choices[0]?.toolCalls).toEqual([]);
    expect(response.choices[0]?.finishReason).toEqual({ unified: 'stop', raw: 'tool_use' });
  });

  it('guardrail: an intervention is a content filter, the raw reason kept', () => {
    const response = bedrockTranslator.parseChatResponse(readJsonFixture('guardrail.json'));
    expect(response.choices[0]?.finishReason).toEqual({ unified: 'content-filter', raw: 'guardrail_intervened' });
  });

  it('errors: a context-window ValidationException keeps its message for routing', () => {
    const error = bedrockTranslator.mapError(
      400,
      readJsonFixture('error-400-input-too-long.json'),
      new Headers(errorHeaders['error-400-input-too-long']),
    );
    expect(error.message).toBe('Input is too long for requested model.');
  });
});
