import { describe, expect, it } from 'vitest';
import {
  fixtureReader,
  reduceProviderStream,
  testProvider,
  type ProviderErrorCase,
} from '../../tests/conformance/provider-suite.ts';
import { awsFrame } from '../../src/framing/aws-event-stream.test-helper.ts';
import { bedrockAnthropicTranslator } from './bedrock-anthropic-translator.ts';

/**
 * Golden tests of Claude through Bedrock's InvokeModel over `__fixtures__/anthropic/`, through the provider seam's
 * conformance suite (which frames each `.events.json` entry as a binary AWS `chunk` message and decodes it with the
 * shared decoder), then the values particular to these fixtures.
 */

const fixtures = new URL('./__fixtures__/anthropic/', import.meta.url);
const { json: readJsonFixture } = fixtureReader(fixtures);
/** The `x-amzn-errortype` header each error fixture comes with. */
const errorHeaders = readJsonFixture('error-headers.json') as Record<string, Record<string, string>>;
const errorCase = (fixture: string, rest: Omit<ProviderErrorCase, 'fixture' | 'headers'>): ProviderErrorCase => ({
  fixture,
  headers: errorHeaders[fixture] ?? {},
  ...rest,
});

testProvider({
  translator: bedrockAnthropicTranslator,
  fixtures,
  snapshots: new URL('./__snapshots__/anthropic-suite/', import.meta.url),
  model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
  chat: ['text', 'tools'],
  errors: [
    errorCase('error-400-malformed', {
      upstreamStatus: 400,
      status: 400,
      type: 'invalid_request_error',
      retryable: false,
    }),
    errorCase('error-424-model-error', { upstreamStatus: 424, status: 502, type: 'upstream_error', retryable: true }),
    errorCase('error-429-throttling', { upstreamStatus: 429, status: 429, type: 'rate_limit_error', retryable: true }),
  ],
});

/** The recorded stream's bytes: each entry framed as the binary `chunk` message Bedrock sends. */
function streamBytes(name: string): Uint8Array {
  const events = readJsonFixture(`${name}.events.json`) as { eventType: string; payload: unknown }[];
  const frames = events.map((entry) => awsFrame('event', entry.eventType, JSON.stringify(entry.payload)));
  const bytes = new Uint8Array(frames.reduce((length, frame) => length + frame.length, 0));
  let offset = 0;
  for (const frame of frames) {
    bytes.set(frame, offset);
    offset += frame.length;
  }
  return bytes;
}

describe('fixture values', () => {
  it('text: cache reads count as input tokens, in the body and in the stream', () => {
    const response = bedrockAnthropicTranslator.parseChatResponse(readJsonFixture('text.json'));
    expect(response.id).toBe('msg_bdrk_01XFDUDYJgAACzvnptvVoYEL');
    expect(response.choices[0]?.text).toBe(
      "Hello! I'm Claude, an AI assistant made by Anthropic. How can I help you today?",
    );
    const expectedUsage = { inputTokens: 21 + 1834, outputTokens: 24, totalTokens: 1879, cachedInputTokens: 1834 };
    expect(response.usage).toMatchObject(expectedUsage);

    const parts = reduceProviderStream(bedrockAnthropicTranslator, streamBytes('text'));
    expect(parts.filter((part) => part.type === 'error')).toEqual([]);
    expect(parts.filter((part) => part.type === 'usage').at(-1)).toMatchObject({ usage: expectedUsage });
  });

  it('tools: two calls, tool indexes 0 and 1 though they are content blocks 1 and 2', () => {
    const parts = reduceProviderStream(bedrockAnthropicTranslator, streamBytes('tools'));
    expect(parts.filter((part) => part.type === 'tool-input-start')).toEqual([
      {
        type: 'tool-input-start',
        choiceIndex: 0,
        toolIndex: 0,
        id: 'toolu_bdrk_01A09q90qw90lq917835lq9',
        name: 'get_weather',
      },
      {
        type: 'tool-input-start',
        choiceIndex: 0,
        toolIndex: 1,
        id: 'toolu_bdrk_01Wv8Vfz9Xk3mTqHr2sLbN4p',
        name: 'get_weather',
      },
    ]);
    const response = bedrockAnthropicTranslator.parseChatResponse(readJsonFixture('tools.json'));
    expect(response.choices[0]?.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_use' });
    expect(response.usage).toMatchObject({
      inputTokens: 389 + 1502,
      cacheWriteInputTokens: 1502,
      cachedInputTokens: 0,
    });
  });
});
