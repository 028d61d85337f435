import { describe, expect, it } from 'vitest';
import type { CanonicalChatResponse, CanonicalChoice } from '../../canonical/canonical-chat-response.ts';
import { anthropicMessageId, renderAnthropicMessagesResponse } from './anthropic-messages-render-response.ts';

const choice = (overrides: Partial<CanonicalChoice> = {}): CanonicalChoice => ({
  index: 0,
  text: 'Hello!',
  toolCalls: [],
  finishReason: { unified: 'stop', raw: 'stop' },
  ...overrides,
});

const response = (overrides: Partial<CanonicalChatResponse> = {}): CanonicalChatResponse => ({
  id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
  model: 'gpt-4o-2024-08-06',
  created: 1_750_000_000,
  choices: [choice()],
  usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150, cachedInputTokens: 100 },
  ...overrides,
});

describe('anthropicMessageId', () => {
  it.each([
    ['msg_01XFDUDYJgAACzvnptvVoYEL', 'msg_01XFDUDYJgAACzvnptvVoYEL'],
    ['chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT', 'msg_chatcmplB9MBs8CjcvOU2jLn4n570S5qMJKcT'],
    ['gen-1750000000-a/b.c', 'msg_gen1750000000abc'],
    ['resp_abc_123', 'msg_resp_abc_123'],
  ])('renders %s as %s', (id, expected) => {
    expect(anthropicMessageId(id)).toBe(expected);
  });

  it('makes up an id when nothing usable is left', () => {
    expect(anthropicMessageId('')).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(anthropicMessageId('---')).toMatch(/^msg_[0-9a-f]{32}$/);
  });
});

describe('renderAnthropicMessagesResponse', () => {
  it('renders a text answer as an Anthropic message with usage in Anthropic terms', () => {
    expect(renderAnthropicMessagesResponse(response(), 'fast')).toEqual({
      id: 'msg_chatcmplB9MBs8CjcvOU2jLn4n570S5qMJKcT',
      type: 'message',
      role: 'assistant',
      model: 'gpt-4o-2024-08-06',
      content: [{ type: 'text', text: 'Hello!' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 100 },
    });
  });

  it('orders thinking, text and tool calls as Anthropic does', () => {
    const rendered = renderAnthropicMessagesResponse(
      response({
        choices: [
          choice({
            text: 'Let me check the weather.',
            reasoning: 'The user wants the weather in Paris.',
            reasoningSignature: 'EqQBCkYIBxgCKkDs',
            toolCalls: [
              { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
              { id: 'call_2', name: 'get_time', arguments: '{"tz":"Europe/Paris"}' },
            ],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          }),
        ],
      }),
      'fast',
    );
    expect(rendered.content).toEqual([
      { type: 'thinking', thinking: 'The user wants the weather in Paris.', signature: 'EqQBCkYIBxgCKkDs' },
      { type: 'text', text: 'Let me check the weather.' },
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris', unit: 'c' } },
      { type: 'tool_use', id: 'call_2', name: 'get_time', input: { tz: 'Europe/Paris' } },
    ]);
    expect(rendered.stop_reason).toBe('tool_use');
  });

  it('gives reasoning without a signature an empty one, and leaves out empty text', () => {
    const rendered = renderAnthropicMessagesResponse(
      response({ choices: [choice({ text: '', reasoning: 'Thinking...' })] }),
      'fast',
    );
    expect(rendered.content).toEqual([{ type: 'thinking', thinking: 'Thinking...', signature: '' }]);
  });

  it.each<[string, Record<string, unknown>]>([
    ['', {}],
    ['  ', {}],
    ['[1,2]', { arguments: '[1,2]' }],
    ['"text"', { arguments: '"text"' }],
    ['null', { arguments: 'null' }],
    ['{"city": "Par', { arguments: '{"city": "Par' }],
  ])('renders tool arguments %j as input %j without throwing', (args, input) => {
    const rendered = renderAnthropicMessagesResponse(
      response({
        choices: [
          choice({
            text: null,
            toolCalls: [{ id: 'call_1', name: 'f', arguments: args }],
            finishReason: { unified: 'tool-calls', raw: undefined },
          }),
        ],
      }),
      'fast',
    );
    expect(rendered.content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'f', input }]);
  });

  it('renders a refusal without text as a text block with stop_reason refusal', () => {
    const rendered = renderAnthropicMessagesResponse(
      response({
        choices: [
          choice({
            text: null,
            refusal: "I can't help with that.",
            finishReason: { unified: 'content-filter', raw: 'content_filter' },
          }),
        ],
      }),
      'fast',
    );
    expect(rendered.content).toEqual([{ type: 'text', text: "I can't help with that." }]);
    expect(rendered.stop_reason).toBe('refusal');
  });

  it('keeps the text when a refusal comes with text', () => {
    const rendered = renderAnthropicMessagesResponse(
      response({ choices: [choice({ text: 'Partial answer.', refusal: 'No more.' })] }),
      'fast',
    );
    expect(rendered.content).toEqual([{ type: 'text', text: 'Partial answer.' }]);
  });

  it.each<[CanonicalChoice['finishReason'], string]>([
    [{ unified: 'length', raw: 'length' }, 'max_tokens'],
    [{ unified: 'stop', raw: 'stop_sequence' }, 'stop_sequence'],
    [{ unified: 'other', raw: 'pause_turn' }, 'pause_turn'],
    [{ unified: 'error', raw: 'error' }, 'end_turn'],
  ])('maps finish reason %j to %s', (finishReason, expected) => {
    const rendered = renderAnthropicMessagesResponse(response({ choices: [choice({ finishReason })] }), 'fast');
    expect(rendered.stop_reason).toBe(expected);
  });

  it('falls back to the requested model, zero usage and empty content', () => {
    expect(renderAnthropicMessagesResponse(response({ model: '', usage: undefined, choices: [] }), 'fast')).toEqual({
      id: 'msg_chatcmplB9MBs8CjcvOU2jLn4n570S5qMJKcT',
      type: 'message',
      role: 'assistant',
      model: 'fast',
      content: [],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
  });
});
