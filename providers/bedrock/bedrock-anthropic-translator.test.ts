import { describe, expect, it } from 'vitest';
import type { CanonicalStreamPart } from '../../src/canonical/index.ts';
import { isGatewayError } from '../../src/errors.ts';
import type { DecodedStreamEvent } from '../../src/framing/index.ts';
import { bedrockAnthropicTranslator } from './bedrock-anthropic-translator.ts';

/** Anthropic's events as the shared decoder yields them once it has unwrapped Bedrock's `chunk` messages. */
const event = (data: Record<string, unknown>): DecodedStreamEvent => ({ type: data.type as string, data });

const messageStart = event({
  type: 'message_start',
  message: {
    id: 'msg_bdrk_01',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
  },
});
const textEvents = [
  messageStart,
  event({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  event({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi!' } }),
  event({ type: 'content_block_stop', index: 0 }),
  event({
    type: 'message_delta',
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: 3 },
  }),
];

function reduce(events: DecodedStreamEvent[]): { parts: CanonicalStreamPart[]; complete: boolean } {
  const reducer = bedrockAnthropicTranslator.chatStream;
  const state: unknown = reducer.init();
  const parts = events.flatMap((decoded) => reducer.onEvent(state, decoded));
  const complete = reducer.isComplete?.(state) ?? false;
  return { parts: [...parts, ...reducer.onEnd(state, { sentinel: false })], complete };
}

describe('bedrockAnthropicTranslator', () => {
  it('declares an InvokeModel chat translator over AWS event streams that passes Anthropic Messages through', () => {
    expect(bedrockAnthropicTranslator.id).toBe('bedrock-anthropic');
    expect(bedrockAnthropicTranslator.operations).toEqual(['chat']);
    expect(bedrockAnthropicTranslator.streamFraming).toBe('aws-event-stream');
    expect(bedrockAnthropicTranslator.nativeDialects).toEqual(['anthropic-messages']);
  });

  it("reads a message_stop carrying Bedrock's invocation metrics as the stream's end, usage from Anthropic's events", () => {
    const { parts, complete } = reduce([
      ...textEvents,
      event({
        type: 'message_stop',
        'amazon-bedrock-invocationMetrics': {
          inputTokenCount: 10,
          outputTokenCount: 3,
          invocationLatency: 512,
          firstByteLatency: 200,
        },
      }),
    ]);

    expect(complete).toBe(true);
    expect(parts.filter((part) => part.type === 'error')).toEqual([]);
    expect(parts.find((part) => part.type === 'text-delta')).toMatchObject({ delta: 'Hi!' });
    expect(parts.find((part) => part.type === 'finish')).toMatchObject({
      finishReason: { unified: 'stop', raw: 'end_turn' },
    });
    expect(parts.filter((part) => part.type === 'usage').at(-1)).toMatchObject({
      usage: { inputTokens: 10, outputTokens: 3, totalTokens: 13 },
    });
  });

  it('reports a stream cut off before message_stop', () => {
    const { parts, complete } = reduce(textEvents);
    expect(complete).toBe(false);
    expect(parts.at(-1)).toMatchObject({ type: 'error', error: { code: 'upstream_stream_incomplete' } });
  });

  it("maps an Anthropic error event inside the stream by its error type (Anthropic's envelope)", () => {
    const reducer = bedrockAnthropicTranslator.chatStream;
    const state: unknown = reducer.init();
    reducer.onEvent(state, messageStart);
    let thrown: unknown;
    try {
      reducer.onEvent(state, event({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    } catch (error) {
      thrown = error;
    }
    expect(isGatewayError(thrown)).toBe(true);
    expect(thrown).toMatchObject({ status: 503, retryable: true });
    expect(isGatewayError(thrown) && thrown.message).toContain('Overloaded');
  });

  it("maps HTTP errors as Bedrock's, by x-amzn-errortype", () => {
    const error = bedrockAnthropicTranslator.mapError(
      400,
      {
        message:
          'Malformed input request: #: extraneous key [foo] is not permitted, please reformat your input and try again.',
      },
      new Headers({ 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' }),
    );
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect(error.message).toContain('extraneous key [foo]');

    const throttled = bedrockAnthropicTranslator.mapError(
      429,
      { message: 'Too many requests, please wait before trying again.' },
      new Headers({ 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/' }),
    );
    expect(throttled).toMatchObject({ status: 429, type: 'rate_limit_error', retryable: true });
  });

  it("validates Bedrock's options", () => {
    expect(bedrockAnthropicTranslator.validateOptions?.({ region: 'us-east-1' })).toEqual([]);
    expect(bedrockAnthropicTranslator.validateOptions?.({ region: 'mars', accessKeyId: 'AKIA' })).toEqual([
      'region: must be an AWS region such as us-east-1',
    ]);
    expect(bedrockAnthropicTranslator.validateOptions?.({ accessKeyId: 'AKIA' })).toEqual([
      'secretAccessKey: required with accessKeyId',
    ]);
  });
});
