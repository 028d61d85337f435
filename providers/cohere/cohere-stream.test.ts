import { describe, expect, it } from 'vitest';
import type { CanonicalStreamPart } from '../../src/canonical/index.ts';
import { isGatewayError } from '../../src/errors.ts';
import { cohereChatStream } from './cohere-stream.ts';

/** Runs events (their data; the `type` inside names them, as Cohere's do) through a fresh reducer. */
function reduce(events: Record<string, unknown>[], end = true): CanonicalStreamPart[] {
  const state = cohereChatStream.init();
  const parts = events.flatMap((data) =>
    cohereChatStream.onEvent(state, { type: typeof data.type === 'string' ? data.type : undefined, data }),
  );
  return end ? [...parts, ...cohereChatStream.onEnd(state, { sentinel: false })] : parts;
}

const messageStart = { type: 'message-start', id: 'm-1', delta: { message: { role: 'assistant' } } };
const messageEnd = (finishReason: string) => ({
  type: 'message-end',
  delta: {
    finish_reason: finishReason,
    usage: { billed_units: { input_tokens: 3, output_tokens: 4 }, cached_tokens: 2 },
  },
});

describe('cohereChatStream', () => {
  it('starts with the message id and no model, and is complete after message-end', () => {
    const state = cohereChatStream.init();
    expect(cohereChatStream.onEvent(state, { type: 'message-start', data: messageStart })).toEqual([
      { type: 'response-start', id: 'm-1', model: '', created: expect.any(Number) as number },
    ]);
    expect(cohereChatStream.isComplete?.(state)).toBe(false);
    const parts = cohereChatStream.onEvent(state, { type: 'message-end', data: messageEnd('MAX_TOKENS') });
    expect(parts).toEqual([
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'length', raw: 'MAX_TOKENS' } },
      {
        type: 'usage',
        usage: {
          inputTokens: 3,
          outputTokens: 4,
          totalTokens: 7,
          cachedInputTokens: 2,
          raw: { billed_units: { input_tokens: 3, output_tokens: 4 }, cached_tokens: 2 },
        },
      },
    ]);
    expect(cohereChatStream.isComplete?.(state)).toBe(true);
    expect(cohereChatStream.onEnd(state, { sentinel: false })).toEqual([]);
  });

  it('turns thinking and text blocks into reasoning and text parts', () => {
    const parts = reduce([
      messageStart,
      { type: 'content-start', index: 0, delta: { message: { content: { type: 'thinking', thinking: '' } } } },
      { type: 'content-delta', index: 0, delta: { message: { content: { thinking: 'Hmm.' } } } },
      { type: 'content-end', index: 0 },
      { type: 'content-start', index: 1, delta: { message: { content: { type: 'text', text: 'Hel' } } } },
      { type: 'content-delta', index: 1, delta: { message: { content: { text: 'lo' } } } },
      { type: 'citation-start', index: 0, delta: { message: { citations: { start: 0, end: 5, text: 'Hello' } } } },
      { type: 'citation-end', index: 0 },
      { type: 'content-end', index: 1 },
      messageEnd('COMPLETE'),
    ]);
    expect(parts.slice(1, -1)).toEqual([
      { type: 'reasoning-start', choiceIndex: 0 },
      { type: 'reasoning-delta', choiceIndex: 0, delta: 'Hmm.' },
      { type: 'reasoning-end', choiceIndex: 0 },
      { type: 'text-start', choiceIndex: 0 },
      { type: 'text-delta', choiceIndex: 0, delta: 'Hel' },
      { type: 'text-delta', choiceIndex: 0, delta: 'lo' },
      { type: 'text-end', choiceIndex: 0 },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'stop', raw: 'COMPLETE' } },
    ]);
  });

  it('streams the tool plan as text and tool calls as tool inputs', () => {
    const parts = reduce([
      messageStart,
      { type: 'tool-plan-delta', delta: { message: { tool_plan: 'I will check.' } } },
      {
        type: 'tool-call-start',
        index: 0,
        delta: {
          message: {
            tool_calls: { id: 'get_weather_x1', type: 'function', function: { name: 'get_weather', arguments: '' } },
          },
        },
      },
      {
        type: 'tool-call-delta',
        index: 0,
        delta: { message: { tool_calls: { function: { arguments: '{"city":' } } } },
      },
      {
        type: 'tool-call-delta',
        index: 0,
        delta: { message: { tool_calls: { function: { arguments: '"Paris"}' } } } },
      },
      { type: 'tool-call-end', index: 0 },
      {
        type: 'tool-call-start',
        index: 1,
        delta: {
          message: {
            tool_calls: { id: 'get_time_y2', type: 'function', function: { name: 'get_time', arguments: '' } },
          },
        },
      },
      { type: 'tool-call-end', index: 1 },
      messageEnd('TOOL_CALL'),
    ]);
    expect(parts.slice(1, -1)).toEqual([
      { type: 'text-delta', choiceIndex: 0, delta: 'I will check.' },
      { type: 'tool-input-start', choiceIndex: 0, toolIndex: 0, id: 'get_weather_x1', name: 'get_weather' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '{"city":' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '"Paris"}' },
      { type: 'tool-input-end', choiceIndex: 0, toolIndex: 0 },
      { type: 'tool-input-start', choiceIndex: 0, toolIndex: 1, id: 'get_time_y2', name: 'get_time' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 1, delta: '{}' },
      { type: 'tool-input-end', choiceIndex: 0, toolIndex: 1 },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'tool-calls', raw: 'TOOL_CALL' } },
    ]);
  });

  it('closes blocks and calls Cohere left open before the finish', () => {
    const parts = reduce([
      messageStart,
      { type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } },
      { type: 'content-delta', index: 0, delta: { message: { content: { text: 'Hi' } } } },
      messageEnd('ERROR'),
    ]);
    expect(parts.map((part) => part.type)).toEqual([
      'response-start',
      'text-start',
      'text-delta',
      'text-end',
      'finish',
      'usage',
    ]);
    expect(parts[4]).toMatchObject({ finishReason: { unified: 'error', raw: 'ERROR' } });
  });

  it('reports a stream cut before message-end as an error part', () => {
    const parts = reduce([
      messageStart,
      { type: 'content-delta', index: 0, delta: { message: { content: { text: 'Hi' } } } },
    ]);
    const last = parts.at(-1);
    expect(last?.type === 'error' && last.error.code).toBe('upstream_stream_incomplete');
  });

  it('throws an error body sent inside the stream', () => {
    const state = cohereChatStream.init();
    cohereChatStream.onEvent(state, { type: 'message-start', data: messageStart });
    try {
      cohereChatStream.onEvent(state, { type: undefined, data: { message: 'internal server error' } });
      throw new Error('expected a GatewayError');
    } catch (error) {
      expect(isGatewayError(error) && error.status === 502 && error.message === 'internal server error').toBe(true);
    }
  });

  it('answers an unreadable event with a 502', () => {
    const state = cohereChatStream.init();
    expect(() =>
      cohereChatStream.onEvent(state, { type: 'content-delta', data: { type: 'content-delta', index: 'x' } }),
    ).toThrow(/cannot read/);
    expect(() =>
      cohereChatStream.onEvent(state, {
        type: 'tool-call-start',
        data: { type: 'tool-call-start', index: 0, delta: { message: { tool_calls: { type: 'function' } } } },
      }),
    ).toThrow(/without a tool call id/);
  });

  it('ignores debug and unknown events', () => {
    expect(reduce([messageStart, { type: 'debug', prompt: '...' }, { type: 'something-new' }], false)).toHaveLength(1);
  });
});
