import { describe, expect, it } from 'vitest';
import type { CanonicalChatResponse, CanonicalChoice } from '../../canonical/canonical-chat-response.ts';
import { validateOpenAIResponsesRequest } from './openai-responses-request-schema.ts';
import { newResponseId, renderOpenAIResponse, responseOutputItems } from './openai-responses-render-response.ts';
import { openAIResponsesToCanonical } from './openai-responses-to-canonical.ts';

const responseId = 'resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b';
const suffix = '67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b';

function answer(choice: Partial<CanonicalChoice>, usage?: CanonicalChatResponse['usage']): CanonicalChatResponse {
  return {
    id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
    model: 'claude-sonnet-4-5-20250929',
    created: 1741476542,
    choices: [{ index: 0, text: null, toolCalls: [], finishReason: { unified: 'stop', raw: 'end_turn' }, ...choice }],
    usage,
  };
}

function render(response: CanonicalChatResponse, body: Record<string, unknown> = {}) {
  const request = validateOpenAIResponsesRequest({ model: 'claude-sonnet', input: 'Hi', ...body });
  return renderOpenAIResponse(response, { id: responseId, createdAt: 1741476542, completedAt: 1741476543, request });
}

describe('renderOpenAIResponse', () => {
  it('renders a text answer as the full Response object with OpenAI defaults', () => {
    const usage = { inputTokens: 36, outputTokens: 87, totalTokens: 123, cachedInputTokens: 10 };
    expect(render(answer({ text: 'In a peaceful grove beneath a silver moon...' }, usage))).toEqual({
      id: responseId,
      object: 'response',
      created_at: 1741476542,
      status: 'completed',
      background: false,
      completed_at: 1741476543,
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      model: 'claude-sonnet-4-5-20250929',
      output: [
        {
          id: `msg_${suffix}_0`,
          type: 'message',
          status: 'completed',
          content: [
            {
              type: 'output_text',
              annotations: [],
              logprobs: [],
              text: 'In a peaceful grove beneath a silver moon...',
            },
          ],
          role: 'assistant',
        },
      ],
      parallel_tool_calls: true,
      previous_response_id: null,
      prompt_cache_key: null,
      reasoning: { effort: null, summary: null },
      safety_identifier: null,
      store: true,
      temperature: 1,
      text: { format: { type: 'text' }, verbosity: 'medium' },
      tool_choice: 'auto',
      tools: [],
      top_p: 1,
      truncation: 'disabled',
      usage: {
        input_tokens: 36,
        input_tokens_details: { cached_tokens: 10 },
        output_tokens: 87,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 123,
      },
      user: null,
      metadata: {},
    });
  });

  it("echoes the request's settings", () => {
    const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: true }];
    const format = { type: 'json_schema', name: 'Weather', schema: { type: 'object' }, strict: true };
    const rendered = render(answer({ text: '{}' }), {
      instructions: 'Be brief.',
      max_output_tokens: 1000,
      parallel_tool_calls: false,
      previous_response_id: 'resp_previous',
      prompt_cache_key: 'session-1',
      reasoning: { effort: 'high', summary: 'detailed' },
      safety_identifier: 'hashed-42',
      store: false,
      temperature: 0.2,
      text: { format, verbosity: 'low' },
      tool_choice: { type: 'function', name: 'get_weather' },
      tools,
      top_p: 0.5,
      truncation: 'auto',
      user: 'user-1',
      metadata: { run: '7' },
    });
    expect(rendered).toMatchObject({
      instructions: 'Be brief.',
      max_output_tokens: 1000,
      parallel_tool_calls: false,
      previous_response_id: 'resp_previous',
      prompt_cache_key: 'session-1',
      reasoning: { effort: 'high', summary: 'detailed' },
      safety_identifier: 'hashed-42',
      store: false,
      temperature: 0.2,
      text: { format, verbosity: 'low' },
      tool_choice: { type: 'function', name: 'get_weather' },
      tools,
      top_p: 0.5,
      truncation: 'auto',
      user: 'user-1',
      metadata: { run: '7' },
    });
    expect(rendered).not.toHaveProperty('output_text');
  });

  it('renders reasoning, text and tool calls as items with ids from the response id and position', () => {
    const rendered = render(
      answer({
        reasoning: 'The user wants the weather in two cities.',
        reasoningSignature: 'EqQBCkYIBxgCKkDs',
        text: 'Checking both.',
        toolCalls: [
          { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { id: 'call_2', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_use' },
      }),
    );
    expect(rendered.status).toBe('completed');
    expect(rendered.output).toEqual([
      {
        id: `rs_${suffix}_0`,
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'The user wants the weather in two cities.' }],
      },
      {
        id: `msg_${suffix}_1`,
        type: 'message',
        status: 'completed',
        content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Checking both.' }],
        role: 'assistant',
      },
      {
        id: `fc_${suffix}_2`,
        type: 'function_call',
        status: 'completed',
        arguments: '{"city":"Paris"}',
        call_id: 'call_1',
        name: 'get_weather',
      },
      {
        id: `fc_${suffix}_3`,
        type: 'function_call',
        status: 'completed',
        arguments: '{"city":"Oslo"}',
        call_id: 'call_2',
        name: 'get_weather',
      },
    ]);
  });

  it('renders a refusal as a refusal part', () => {
    const rendered = render(answer({ refusal: "I'm sorry, I can't help with that." }));
    expect(rendered.output).toEqual([
      {
        id: `msg_${suffix}_0`,
        type: 'message',
        status: 'completed',
        content: [{ type: 'refusal', refusal: "I'm sorry, I can't help with that." }],
        role: 'assistant',
      },
    ]);
  });

  it('marks an answer cut by the token limit or a filter incomplete', () => {
    const cut = render(answer({ text: 'Once upon a', finishReason: { unified: 'length', raw: 'max_tokens' } }));
    expect(cut).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      completed_at: null,
      output: [{ type: 'message', status: 'incomplete' }],
    });
    const filtered = render(answer({ text: '', finishReason: { unified: 'content-filter', raw: 'SAFETY' } }));
    expect(filtered).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'content_filter' },
      output: [],
    });
  });

  it('reports zero usage when the provider reported none, and the request model when the answer has none', () => {
    const rendered = render({ ...answer({ text: 'Hi' }), model: '' });
    expect(rendered.model).toBe('claude-sonnet');
    expect(rendered.usage).toEqual({
      input_tokens: 0,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 0,
    });
  });

  it('gives the same item ids on every render, and items the next turn can take back as history', () => {
    const response = answer({
      text: 'Let me check.',
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{}' }],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    });
    const first = render(response);
    expect(render(response).output).toEqual(first.output);
    const next = validateOpenAIResponsesRequest({
      model: 'claude-sonnet',
      previous_response_id: responseId,
      input: [{ type: 'function_call_output', call_id: 'call_1', output: 'sunny' }],
    });
    expect(openAIResponsesToCanonical(next, responseOutputItems(first)).messages).toEqual([
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'Let me check.' }],
        toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{}' }],
      },
      { role: 'tool', toolCallId: 'call_1', content: 'sunny' },
    ]);
  });
});

describe('responseOutputItems', () => {
  it('returns the object entries of output, and nothing when output is missing', () => {
    const item = { id: 'msg_1', type: 'message' };
    expect(responseOutputItems({ output: [item, null, 'x', [1]] })).toEqual([item]);
    expect(responseOutputItems({ object: 'response' })).toEqual([]);
  });
});

describe('newResponseId', () => {
  it('is resp_ and 32 hex digits, different each time', () => {
    const id = newResponseId();
    expect(id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(newResponseId()).not.toBe(id);
  });
});
