import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.ts';
import { parseCohereChatResponse } from './cohere-response.ts';

describe('parseCohereChatResponse', () => {
  it('puts the tool plan before the text and reads tool calls, empty arguments as {}', () => {
    const response = parseCohereChatResponse({
      id: 'r-1',
      message: {
        role: 'assistant',
        tool_plan: 'Plan. ',
        content: [{ type: 'text', text: 'Text.' }],
        tool_calls: [{ id: 'c-1', type: 'function', function: { name: 'get_time', arguments: '' } }],
      },
      finish_reason: 'TOOL_CALL',
    });
    expect(response).toMatchObject({ id: 'r-1', model: '', usage: undefined });
    expect(response.choices[0]).toEqual({
      index: 0,
      text: 'Plan. Text.',
      toolCalls: [{ id: 'c-1', name: 'get_time', arguments: '{}' }],
      finishReason: { unified: 'tool-calls', raw: 'TOOL_CALL' },
    });
  });

  it('has null text when there is none, and keeps an unknown finish reason raw', () => {
    const choice = parseCohereChatResponse({ id: 'r-2', message: { role: 'assistant' }, finish_reason: 'NEW_REASON' })
      .choices[0];
    expect(choice?.text).toBeNull();
    expect(choice?.finishReason).toEqual({ unified: 'other', raw: 'NEW_REASON' });
  });

  it('maps TIMEOUT to an error finish', () => {
    const choice = parseCohereChatResponse({
      id: 'r-3',
      message: { role: 'assistant', content: [{ type: 'text', text: 'Part' }] },
      finish_reason: 'TIMEOUT',
    }).choices[0];
    expect(choice?.finishReason).toEqual({ unified: 'error', raw: 'TIMEOUT' });
  });

  it('takes billed units, falls back to processed tokens, and caps cached tokens at the input', () => {
    const usage = {
      billed_units: { output_tokens: 9 },
      tokens: { input_tokens: 40, output_tokens: 12 },
      cached_tokens: 64,
    };
    expect(
      parseCohereChatResponse({ id: 'r-4', message: { role: 'assistant' }, finish_reason: 'COMPLETE', usage }).usage,
    ).toEqual({
      inputTokens: 40,
      outputTokens: 9,
      totalTokens: 49,
      cachedInputTokens: 40,
      raw: usage,
    });
  });

  it('answers a body that is not a chat response with a 502', () => {
    for (const body of [
      { message: 'no id' },
      { id: 'r-5', message: { tool_calls: [{ id: 'c', function: {} }] } },
      'text',
    ]) {
      try {
        parseCohereChatResponse(body);
        throw new Error('expected a GatewayError');
      } catch (error) {
        expect(isGatewayError(error) && error.status === 502 && error.code === 'upstream_invalid_response').toBe(true);
      }
    }
  });
});
