import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isGatewayError } from '../../src/errors.ts';
import { jsonResponseToolName } from './anthropic-json-response.ts';
import { parseAnthropicChatResponse } from './anthropic-response.ts';

function message(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    content: [{ type: 'text', text: 'Hi there.' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
    ...overrides,
  };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2025-10-01T12:00:00.500Z'));
});
afterEach(() => {
  vi.useRealTimers();
});

describe('parseAnthropicChatResponse', () => {
  it('reads id, model, text, finish reason and usage, with created in unix seconds', () => {
    expect(parseAnthropicChatResponse(message())).toEqual({
      id: 'msg_01',
      model: 'claude-sonnet-4-5-20250929',
      created: 1759320000,
      choices: [{ index: 0, text: 'Hi there.', toolCalls: [], finishReason: { unified: 'stop', raw: 'end_turn' } }],
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, raw: { input_tokens: 10, output_tokens: 5 } },
    });
  });

  it('joins text blocks, turns thinking into reasoning and skips blocks it does not translate', () => {
    const [choice] = parseAnthropicChatResponse(
      message({
        content: [
          { type: 'thinking', thinking: 'Let me think.', signature: 'sig' },
          { type: 'redacted_thinking', data: 'opaque' },
          { type: 'text', text: 'Paris is the capital', citations: [{ type: 'char_location' }] },
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'capital' } },
          { type: 'text', text: ' of France.' },
        ],
      }),
    ).choices;
    expect(choice?.text).toBe('Paris is the capital of France.');
    expect(choice?.reasoning).toBe('Let me think.');
    expect(choice?.toolCalls).toEqual([]);
  });

  it('turns tool_use blocks into tool calls with JSON arguments, text null when there is none', () => {
    const [choice] = parseAnthropicChatResponse(
      message({
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris', days: [1, 2] } },
          { type: 'tool_use', id: 'toolu_2', name: 'now', input: {} },
        ],
        stop_reason: 'tool_use',
      }),
    ).choices;
    expect(choice?.text).toBeNull();
    expect(choice?.toolCalls).toEqual([
      { id: 'toolu_1', name: 'get_weather', arguments: '{"location":"Paris","days":[1,2]}' },
      { id: 'toolu_2', name: 'now', arguments: '{}' },
    ]);
    expect(choice?.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_use' });
  });

  it('turns the JSON response tool back into text that finished with stop', () => {
    const [choice] = parseAnthropicChatResponse(
      message({
        content: [{ type: 'tool_use', id: 'toolu_1', name: jsonResponseToolName, input: { city: 'Paris' } }],
        stop_reason: 'tool_use',
      }),
    ).choices;
    expect(choice?.text).toBe('{"city":"Paris"}');
    expect(choice?.toolCalls).toEqual([]);
    expect(choice?.finishReason).toEqual({ unified: 'stop', raw: 'tool_use' });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool-calls'],
    ['refusal', 'content-filter'],
    ['pause_turn', 'other'],
    ['something_new', 'other'],
  ])('maps stop_reason %s to %s, keeping the raw value', (stopReason, unified) => {
    expect(parseAnthropicChatResponse(message({ stop_reason: stopReason })).choices[0]?.finishReason).toEqual({
      unified,
      raw: stopReason,
    });
  });

  it('counts cache reads and writes as input tokens, and reports them apart', () => {
    const raw = {
      input_tokens: 21,
      cache_creation_input_tokens: 250,
      cache_read_input_tokens: 1800,
      cache_creation: { ephemeral_5m_input_tokens: 250, ephemeral_1h_input_tokens: 0 },
      output_tokens: 40,
      output_tokens_details: { thinking_tokens: 12 },
      service_tier: 'standard',
    };
    expect(parseAnthropicChatResponse(message({ usage: raw })).usage).toEqual({
      inputTokens: 2071,
      outputTokens: 40,
      totalTokens: 2111,
      cachedInputTokens: 1800,
      cacheWriteInputTokens: 250,
      reasoningTokens: 12,
      raw,
    });
  });

  it('leaves usage undefined when Anthropic sent none', () => {
    expect(parseAnthropicChatResponse(message({ usage: undefined })).usage).toBeUndefined();
  });

  it('answers a body that is not a Messages response with a 502', () => {
    const body = { id: 'msg_01', content: 'not blocks' };
    let caught: unknown;
    try {
      parseAnthropicChatResponse(body);
    } catch (error) {
      caught = error;
    }
    expect(isGatewayError(caught)).toBe(true);
    expect(caught).toMatchObject({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_invalid_response',
      provider: 'anthropic',
      upstreamBody: body,
    });
    expect((caught as Error).message).toContain('content');
  });
});
