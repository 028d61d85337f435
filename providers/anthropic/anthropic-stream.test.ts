import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CanonicalStreamPart } from '../../src/canonical/index.ts';
import { isGatewayError, type GatewayError } from '../../src/errors.ts';
import { jsonResponseToolName } from './anthropic-json-response.ts';
import { anthropicChatStream } from './anthropic-stream.ts';

/** Anthropic stream events as decoded JSON payloads; the SSE event name is taken from `type`, as Anthropic sends it. */
type EventData = Record<string, unknown> & { type: string };

function reduce(events: EventData[], options: { end?: boolean } = {}): CanonicalStreamPart[] {
  const state = anthropicChatStream.init();
  const parts = events.flatMap((data) => anthropicChatStream.onEvent(state, { type: data.type, data }));
  return options.end === false ? parts : [...parts, ...anthropicChatStream.onEnd(state)];
}

function thrown(events: EventData[]): GatewayError {
  try {
    reduce(events);
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected the stream to throw');
}

const messageStart = (usage: Record<string, unknown> = { input_tokens: 10, output_tokens: 1 }): EventData => ({
  type: 'message_start',
  message: {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    content: [],
    stop_reason: null,
    usage,
  },
});
const blockStart = (index: number, block: Record<string, unknown>): EventData => ({
  type: 'content_block_start',
  index,
  content_block: block,
});
const blockDelta = (index: number, delta: Record<string, unknown>): EventData => ({
  type: 'content_block_delta',
  index,
  delta,
});
const blockStop = (index: number): EventData => ({ type: 'content_block_stop', index });
const messageDelta = (stopReason: string, usage: Record<string, unknown> = { output_tokens: 7 }): EventData => ({
  type: 'message_delta',
  delta: { stop_reason: stopReason, stop_sequence: null },
  usage,
});
const messageStop: EventData = { type: 'message_stop' };

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2025-10-01T12:00:00Z'));
});
afterEach(() => {
  vi.useRealTimers();
});

describe('anthropicChatStream', () => {
  it('turns a text stream into response-start, the prompt usage, a text block, finish and the final usage', () => {
    expect(
      reduce([
        messageStart(),
        blockStart(0, { type: 'text', text: '' }),
        { type: 'ping' },
        blockDelta(0, { type: 'text_delta', text: 'Hello' }),
        blockDelta(0, { type: 'text_delta', text: ' world' }),
        blockStop(0),
        messageDelta('end_turn'),
        messageStop,
      ]),
    ).toEqual([
      { type: 'response-start', id: 'msg_01', model: 'claude-sonnet-4-5-20250929', created: 1759320000 },
      {
        type: 'usage',
        usage: { inputTokens: 10, outputTokens: 1, totalTokens: 11, raw: { input_tokens: 10, output_tokens: 1 } },
      },
      { type: 'text-start', choiceIndex: 0 },
      { type: 'text-delta', choiceIndex: 0, delta: 'Hello' },
      { type: 'text-delta', choiceIndex: 0, delta: ' world' },
      { type: 'text-end', choiceIndex: 0 },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'stop', raw: 'end_turn' } },
      {
        type: 'usage',
        usage: { inputTokens: 10, outputTokens: 7, totalTokens: 17, raw: { input_tokens: 10, output_tokens: 7 } },
      },
    ]);
  });

  it('counts tool indexes among tool blocks only and streams their input JSON', () => {
    const parts = reduce([
      messageStart(),
      blockStart(0, { type: 'thinking', thinking: '', signature: '' }),
      blockDelta(0, { type: 'thinking_delta', thinking: 'Both cities.' }),
      blockDelta(0, { type: 'signature_delta', signature: 'sig' }),
      blockStop(0),
      blockStart(1, { type: 'text', text: '' }),
      blockDelta(1, { type: 'text_delta', text: 'Checking.' }),
      blockStop(1),
      blockStart(2, { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: {} }),
      blockDelta(2, { type: 'input_json_delta', partial_json: '' }),
      blockDelta(2, { type: 'input_json_delta', partial_json: '{"location": "Par' }),
      blockDelta(2, { type: 'input_json_delta', partial_json: 'is"}' }),
      blockStop(2),
      blockStart(3, { type: 'tool_use', id: 'toolu_b', name: 'now', input: {} }),
      blockStop(3),
      messageDelta('tool_use'),
      messageStop,
    ]);
    expect(parts.slice(2, -1)).toEqual([
      { type: 'reasoning-start', choiceIndex: 0 },
      { type: 'reasoning-delta', choiceIndex: 0, delta: 'Both cities.' },
      { type: 'reasoning-end', choiceIndex: 0, signature: 'sig' },
      { type: 'text-start', choiceIndex: 0 },
      { type: 'text-delta', choiceIndex: 0, delta: 'Checking.' },
      { type: 'text-end', choiceIndex: 0 },
      { type: 'tool-input-start', choiceIndex: 0, toolIndex: 0, id: 'toolu_a', name: 'get_weather' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '{"location": "Par' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: 'is"}' },
      { type: 'tool-input-end', choiceIndex: 0, toolIndex: 0 },
      { type: 'tool-input-start', choiceIndex: 0, toolIndex: 1, id: 'toolu_b', name: 'now' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 1, delta: '{}' },
      { type: 'tool-input-end', choiceIndex: 0, toolIndex: 1 },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'tool-calls', raw: 'tool_use' } },
    ]);
  });

  it('streams the JSON response tool as text that finishes with stop', () => {
    const parts = reduce([
      messageStart(),
      blockStart(0, { type: 'tool_use', id: 'toolu_j', name: jsonResponseToolName, input: {} }),
      blockDelta(0, { type: 'input_json_delta', partial_json: '{"city": ' }),
      blockDelta(0, { type: 'input_json_delta', partial_json: '"Paris"}' }),
      blockStop(0),
      messageDelta('tool_use'),
      messageStop,
    ]);
    expect(parts.slice(2, -1)).toEqual([
      { type: 'text-delta', choiceIndex: 0, delta: '{"city": ' },
      { type: 'text-delta', choiceIndex: 0, delta: '"Paris"}' },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'stop', raw: 'tool_use' } },
    ]);
  });

  it('merges cumulative usage: message_delta counts replace message_start ones, nulls do not', () => {
    const parts = reduce([
      messageStart({
        input_tokens: 20,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 5,
        output_tokens: 1,
      }),
      messageDelta('end_turn', { input_tokens: null, cache_read_input_tokens: 100, output_tokens: 30 }),
      messageStop,
    ]);
    expect(parts.filter((part) => part.type === 'usage').slice(1)).toEqual([
      {
        type: 'usage',
        usage: {
          inputTokens: 125,
          outputTokens: 30,
          totalTokens: 155,
          cachedInputTokens: 100,
          cacheWriteInputTokens: 5,
          raw: { input_tokens: 20, cache_read_input_tokens: 100, cache_creation_input_tokens: 5, output_tokens: 30 },
        },
      },
    ]);
  });

  it('emits usage at the end when message_stop never came, once, and reports the unconfirmed end', () => {
    const state = anthropicChatStream.init();
    anthropicChatStream.onEvent(state, { type: 'message_start', data: messageStart() });
    anthropicChatStream.onEvent(state, { type: 'message_delta', data: messageDelta('max_tokens') });
    const end = anthropicChatStream.onEnd(state);
    expect(end).toEqual([
      { type: 'usage', usage: expect.objectContaining({ inputTokens: 10, outputTokens: 7 }) as unknown },
      {
        type: 'error',
        error: expect.objectContaining({ status: 502, code: 'upstream_stream_incomplete' }) as unknown,
      },
    ]);
    expect(anthropicChatStream.onEnd(state)).toEqual([]);
  });

  it('reports a stream cut off before message_delta as an error part, after the usage it knows', () => {
    const parts = reduce([
      messageStart(),
      blockStart(0, { type: 'text', text: '' }),
      blockDelta(0, { type: 'text_delta', text: 'Hel' }),
    ]);
    expect(parts.map((part) => part.type)).toEqual([
      'response-start',
      'usage',
      'text-start',
      'text-delta',
      'usage',
      'error',
    ]);
    const last = parts.at(-1);
    expect(last?.type === 'error' && last.error).toMatchObject({
      status: 502,
      code: 'upstream_stream_incomplete',
      retryable: false,
    });
  });

  it.each([
    ['overloaded_error', 503, 'upstream_overloaded'],
    ['rate_limit_error', 429, 'rate_limit_exceeded'],
    ['api_error', 502, 'upstream_server_error'],
    ['brand_new_error', 502, 'upstream_server_error'],
  ])('throws an error event of type %s as a %i', (errorType, status, code) => {
    const error = thrown([messageStart(), { type: 'error', error: { type: errorType, message: 'Overloaded' } }]);
    expect(error).toMatchObject({ status, code, message: 'Overloaded', provider: 'anthropic', retryable: true });
  });

  it('ignores pings, unknown events and deltas it does not translate', () => {
    const parts = reduce(
      [
        messageStart(),
        { type: 'ping' },
        { type: 'brand_new_event', whatever: 1 },
        blockStart(0, { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }),
        blockDelta(0, { type: 'input_json_delta', partial_json: '{"query": "x"}' }),
        blockStop(0),
        blockStart(1, { type: 'text', text: '' }),
        blockDelta(1, { type: 'citations_delta', citation: {} }),
        blockStop(1),
      ],
      { end: false },
    );
    expect(parts.map((part) => part.type)).toEqual(['response-start', 'usage', 'text-start', 'text-end']);
  });

  it('rejects an event of the wrong shape as an invalid stream', () => {
    const error = thrown([
      messageStart(),
      { type: 'content_block_start', index: '0', content_block: { type: 'text' } },
    ]);
    expect(error).toMatchObject({ status: 502, code: 'upstream_invalid_stream' });
  });

  it('keeps state per stream', () => {
    const first = anthropicChatStream.init();
    const second = anthropicChatStream.init();
    anthropicChatStream.onEvent(first, {
      type: 'content_block_start',
      data: blockStart(0, { type: 'tool_use', id: 'a', name: 'x', input: {} }),
    });
    const parts = anthropicChatStream.onEvent(second, {
      type: 'content_block_start',
      data: blockStart(0, { type: 'tool_use', id: 'b', name: 'y', input: {} }),
    });
    expect(parts).toEqual([{ type: 'tool-input-start', choiceIndex: 0, toolIndex: 0, id: 'b', name: 'y' }]);
  });
});

describe('a hostile reasoning signature', () => {
  it('ends the stream once the signature grows past 64 KB, instead of holding it', () => {
    const state = anthropicChatStream.init();
    const event = (data: Record<string, unknown>) => ({ type: data.type as string, data });
    anthropicChatStream.onEvent(
      state,
      event({ type: 'message_start', message: { id: 'msg_1', model: 'm', usage: {} } }),
    );
    anthropicChatStream.onEvent(
      state,
      event({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }),
    );
    const piece = event({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'signature_delta', signature: 'x'.repeat(8192) },
    });
    expect(() => {
      for (let index = 0; index < 9; index += 1) anthropicChatStream.onEvent(state, piece);
    }).toThrow(/reasoning signature longer than 65536/);
  });
});
