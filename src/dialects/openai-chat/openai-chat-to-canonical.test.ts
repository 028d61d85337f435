import { describe, expect, it } from 'vitest';
import { isGatewayError, type GatewayError } from '../../errors.ts';
import { openAIChatRequestSchema } from './openai-chat-request-schema.ts';
import { openAIChatToCanonical } from './openai-chat-to-canonical.ts';

/** Converts a client body the way the route does: validate, then convert. */
function convert(body: Record<string, unknown>) {
  return openAIChatToCanonical(openAIChatRequestSchema.parse({ model: 'fast', ...body }));
}

function rejection(body: Record<string, unknown>): GatewayError {
  try {
    convert(body);
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected the conversion to be rejected');
}

const user = { role: 'user', content: 'Hi' };

describe('openAIChatToCanonical', () => {
  it('converts a minimal request with defaults', () => {
    expect(convert({ messages: [user] })).toEqual({
      model: 'fast',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      stream: false,
      streamIncludeUsage: false,
    });
  });

  it('reads documents (an extra body field for providers that ground answers in them): texts and {id, data}', () => {
    expect(
      convert({ messages: [user], documents: ['plain text', { id: 'd2', data: { title: 'T' } }] }).documents,
    ).toEqual([{ data: { text: 'plain text' } }, { id: 'd2', data: { title: 'T' } }]);
    expect(() => convert({ messages: [user], documents: [{ title: 'no data field' }] })).toThrow();
  });

  it('maps system and developer messages to system, joining text parts', () => {
    const { messages } = convert({
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'developer',
          content: [
            { type: 'text', text: 'Answer ' },
            { type: 'text', text: 'in French.' },
          ],
        },
        user,
      ],
    });
    expect(messages.slice(0, 2)).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Answer in French.' },
    ]);
  });

  it('converts user text and image parts, keeping the detail and the name', () => {
    const { messages } = convert({
      messages: [
        {
          role: 'user',
          name: 'ada',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
    });
    expect(messages).toEqual([
      {
        role: 'user',
        name: 'ada',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', url: 'https://example.com/cat.png', detail: 'low' },
          { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=' },
        ],
      },
    ]);
  });

  it('converts assistant tool calls and tool results', () => {
    const { messages } = convert({
      messages: [
        user,
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '18°C' }] },
        {
          role: 'assistant',
          content: [
            { type: 'refusal', refusal: 'no' },
            { type: 'text', text: 'It is 18°C.' },
          ],
        },
      ],
    });
    expect(messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [],
        toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      },
      { role: 'tool', toolCallId: 'call_1', content: '18°C' },
      { role: 'assistant', content: [{ type: 'text', text: 'It is 18°C.' }], toolCalls: [] },
    ]);
  });

  it('drops empty string content', () => {
    expect(convert({ messages: [{ role: 'user', content: '' }] }).messages).toEqual([{ role: 'user', content: [] }]);
  });

  it('converts tools, tool_choice and a json_schema response format', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const canonical = convert({
      messages: [user],
      tools: [
        { type: 'function', function: { name: 'lookup', description: 'Look up.', parameters: schema, strict: true } },
        { type: 'function', function: { name: 'now' } },
      ],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
    });
    expect(canonical.tools).toEqual([
      { name: 'lookup', description: 'Look up.', parameters: schema, strict: true },
      { name: 'now', parameters: { type: 'object', properties: {} } },
    ]);
    expect(canonical.toolChoice).toEqual({ type: 'tool', name: 'lookup' });
    expect(canonical.responseFormat).toEqual({ type: 'json_schema', name: 'answer', schema, strict: true });
    expect(convert({ messages: [user], tool_choice: 'required' }).toolChoice).toEqual({ type: 'required' });
    expect(convert({ messages: [user], response_format: { type: 'json_object' } }).responseFormat).toEqual({
      type: 'json_object',
    });
  });

  it('turns a stop string into an array and keeps a stop array', () => {
    expect(convert({ messages: [user], stop: 'END' }).stop).toEqual(['END']);
    expect(convert({ messages: [user], stop: ['a', 'b'] }).stop).toEqual(['a', 'b']);
    expect('stop' in convert({ messages: [user], stop: null })).toBe(false);
  });

  it('prefers max_completion_tokens over max_tokens', () => {
    expect(convert({ messages: [user], max_tokens: 100, max_completion_tokens: 200 }).maxTokens).toBe(200);
    expect(convert({ messages: [user], max_tokens: 100 }).maxTokens).toBe(100);
    expect(convert({ messages: [user], max_tokens: 100, max_completion_tokens: null }).maxTokens).toBe(100);
  });

  it('renames sampling and stream options, dropping nulls', () => {
    const canonical = convert({
      messages: [user],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0,
      top_p: 0.9,
      seed: 42,
      n: 2,
      user: 'u-1',
      presence_penalty: -1,
      frequency_penalty: null,
      logprobs: true,
      top_logprobs: 3,
      parallel_tool_calls: false,
      reasoning_effort: 'low',
    });
    expect(canonical).toEqual({
      model: 'fast',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      stream: true,
      streamIncludeUsage: true,
      temperature: 0,
      topP: 0.9,
      seed: 42,
      n: 2,
      user: 'u-1',
      presencePenalty: -1,
      logprobs: true,
      topLogprobs: 3,
      parallelToolCalls: false,
      reasoningEffort: 'low',
    });
  });

  it('rejects parts and roles only OpenAI-compatible upstreams accept, naming the field', () => {
    const audio = rejection({
      messages: [
        user,
        {
          role: 'user',
          content: [
            { type: 'text', text: 'x' },
            { type: 'input_audio', input_audio: { data: '', format: 'wav' } },
          ],
        },
      ],
    });
    expect([audio.status, audio.param]).toEqual([400, 'messages.[1].content.[1].type']);
    const legacy = rejection({ messages: [{ role: 'function', name: 'f', content: 'x' }] });
    expect([legacy.status, legacy.param]).toEqual([400, 'messages.[0].role']);
  });
});
