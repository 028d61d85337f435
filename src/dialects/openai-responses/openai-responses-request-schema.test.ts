import { describe, expect, it } from 'vitest';
import { isGatewayError, type GatewayError } from '../../errors.ts';
import { responsesInputItems, validateOpenAIResponsesRequest } from './openai-responses-request-schema.ts';

const base = { model: 'gpt-5' };

function rejection(body: Record<string, unknown>): GatewayError {
  try {
    validateOpenAIResponsesRequest(body);
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected the request to be rejected');
}

const withInput = (...input: unknown[]) => ({ ...base, input });

describe('validateOpenAIResponsesRequest', () => {
  it('accepts a string input and keeps unknown fields at every level', () => {
    const body = {
      ...base,
      input: 'Tell me a three sentence bedtime story about a unicorn.',
      service_tier: 'flex',
      prompt_cache_retention: '24h',
      text: { format: { type: 'text' }, verbosity: 'low', future: 1 },
      reasoning: { effort: 'low', summary: 'auto', generate_summary: null },
    };
    expect(validateOpenAIResponsesRequest(body)).toEqual(body);
  });

  it('accepts every item and part type the SDKs send, including types it does not read', () => {
    const body = withInput(
      { role: 'developer', content: 'Answer in French.' },
      { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'Be brief.' }] },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is in these?' },
          { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'original' },
          { type: 'input_image', file_id: 'file-abc', detail: 'auto' },
          { type: 'input_file', filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQ=' },
          { type: 'input_file', file_url: 'https://example.com/report.pdf' },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
        ],
      },
      {
        id: 'msg_67ccd3acc8d48190a77525dc6de64b4104becb25c95c1d41',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        phase: 'final_answer',
        content: [
          { type: 'output_text', text: 'Un chat.', annotations: [], logprobs: [] },
          { type: 'refusal', refusal: 'I cannot identify people.' },
        ],
      },
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [{ type: 'summary_text', text: 'Thinking.' }],
        encrypted_content: 'gAAA',
      },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: [
          { type: 'input_text', text: '18C' },
          { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
        ],
      },
      { type: 'item_reference', id: 'msg_abc' },
      { id: 'msg_def' },
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'weather' } },
      { type: 'computer_call_output', call_id: 'call_2', output: { type: 'computer_screenshot', image_url: 'x' } },
    );
    expect(validateOpenAIResponsesRequest(body)).toEqual(body);
  });

  it('accepts function and built-in tools and every tool choice shape', () => {
    const tools = [
      { type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: true, defer_loading: false },
      { type: 'function', name: 'ping', parameters: null, strict: null, description: null },
      { type: 'web_search', search_context_size: 'low' },
      { type: 'web_search_preview' },
      { type: 'file_search', vector_store_ids: ['vs_1'] },
      { type: 'code_interpreter', container: { type: 'auto' } },
      { type: 'computer_use_preview', display_width: 1024, display_height: 768, environment: 'browser' },
      { type: 'image_generation' },
      { type: 'mcp', server_label: 'deepwiki', server_url: 'https://mcp.deepwiki.com/mcp' },
      { type: 'local_shell' },
      { type: 'custom', name: 'apply_patch', format: { type: 'grammar' } },
    ];
    for (const tool_choice of [
      'auto',
      'none',
      'required',
      { type: 'function', name: 'get_weather' },
      { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'get_weather' }] },
      { type: 'web_search_preview' },
    ]) {
      const body = { ...base, input: 'Hi', tools, tool_choice };
      expect(validateOpenAIResponsesRequest(body)).toEqual(body);
    }
  });

  it('accepts the nulls the Python SDK sends for optional fields', () => {
    const body = {
      ...base,
      input: 'Hi',
      instructions: null,
      previous_response_id: null,
      max_output_tokens: null,
      temperature: null,
      top_p: null,
      tools: null,
      tool_choice: null,
      text: null,
      reasoning: null,
      metadata: null,
      store: null,
      stream: null,
      truncation: null,
      include: null,
    };
    expect(validateOpenAIResponsesRequest(body)).toEqual(body);
  });

  it.each<{ name: string; body: Record<string, unknown>; param: string }>([
    { name: 'a missing model', body: { input: 'Hi' }, param: 'model' },
    { name: 'an empty model', body: { model: '', input: 'Hi' }, param: 'model' },
    { name: 'an input that is an object', body: { ...base, input: { role: 'user', content: 'Hi' } }, param: 'input' },
    { name: 'a message without content', body: withInput({ role: 'user' }), param: 'input.[0].content' },
    {
      name: 'a message with a bad role',
      body: withInput({ type: 'message', role: 'tool', content: 'x' }),
      param: 'input.[0].role',
    },
    {
      name: 'a text part without text',
      body: withInput({ role: 'user', content: [{ type: 'input_text' }] }),
      param: 'input.[0].content.[0].text',
    },
    {
      name: 'a function call without a name',
      body: withInput({ type: 'function_call', call_id: 'c', arguments: '{}' }),
      param: 'input.[0].name',
    },
    {
      name: 'a function call with object arguments',
      body: withInput({ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }),
      param: 'input.[0].arguments',
    },
    {
      name: 'a function output without call_id',
      body: withInput({ type: 'function_call_output', output: 'ok' }),
      param: 'input.[0].call_id',
    },
    {
      name: 'a function output that is a number',
      body: withInput({ type: 'function_call_output', call_id: 'c', output: 1 }),
      param: 'input.[0].output',
    },
    {
      name: 'a reasoning item without summary',
      body: withInput({ type: 'reasoning', id: 'rs_1' }),
      param: 'input.[0].summary',
    },
    { name: 'an item reference without id', body: withInput({ type: 'item_reference' }), param: 'input.[0].id' },
    { name: 'an item with a numeric type', body: withInput({ type: 7 }), param: 'input.[0].type' },
    {
      name: 'a function tool without a name',
      body: { ...base, tools: [{ type: 'function', parameters: {} }] },
      param: 'tools.[0].name',
    },
    { name: 'a tool without a type', body: { ...base, tools: [{ name: 'f' }] }, param: 'tools.[0].type' },
    { name: 'an unknown tool choice string', body: { ...base, tool_choice: 'any' }, param: 'tool_choice' },
    {
      name: 'a function tool choice without a name',
      body: { ...base, tool_choice: { type: 'function' } },
      param: 'tool_choice.name',
    },
    {
      name: 'a json_schema format without a schema',
      body: { ...base, text: { format: { type: 'json_schema', name: 'x' } } },
      param: 'text.format.schema',
    },
    {
      name: 'an unknown text format',
      body: { ...base, text: { format: { type: 'yaml' } } },
      param: 'text.format.type',
    },
    {
      name: 'an unknown reasoning effort',
      body: { ...base, reasoning: { effort: 'extreme' } },
      param: 'reasoning.effort',
    },
    { name: 'a zero max_output_tokens', body: { ...base, max_output_tokens: 0 }, param: 'max_output_tokens' },
    { name: 'a fractional max_output_tokens', body: { ...base, max_output_tokens: 10.5 }, param: 'max_output_tokens' },
    { name: 'a temperature above 2', body: { ...base, temperature: 2.5 }, param: 'temperature' },
    { name: 'a top_p above 1', body: { ...base, top_p: 1.5 }, param: 'top_p' },
    { name: 'a non-string metadata value', body: { ...base, metadata: { run: 1 } }, param: 'metadata.run' },
    { name: 'a stream that is a string', body: { ...base, stream: 'true' }, param: 'stream' },
  ])('rejects $name, naming $param', ({ body, param }) => {
    const error = rejection(body);
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message).toContain(`'${param}'`);
  });

  it('rejects metadata with more than 16 keys', () => {
    const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`key${index}`, 'v']));
    const error = rejection({ ...base, metadata });
    expect(error.param).toBe('metadata');
    expect(error.message).toContain('at most 16 keys');
    const { key16: _dropped, ...sixteen } = metadata;
    expect(validateOpenAIResponsesRequest({ ...base, metadata: sixteen }).metadata).toEqual(sixteen);
  });
});

describe('responsesInputItems', () => {
  it('turns a string input into one user message with an input_text part', () => {
    expect(responsesInputItems(validateOpenAIResponsesRequest({ ...base, input: 'Hi' }))).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] },
    ]);
  });

  it('types untyped messages and references, keeping every other item as sent', () => {
    const call = { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}', status: 'completed' };
    const request = validateOpenAIResponsesRequest(
      withInput({ role: 'user', content: 'Hi', phase: null }, call, { id: 'msg_1' }, { type: null, id: 'msg_2' }),
    );
    const items = responsesInputItems(request);
    expect(items).toEqual([
      { type: 'message', role: 'user', content: 'Hi', phase: null },
      call,
      { type: 'item_reference', id: 'msg_1' },
      { type: 'item_reference', id: 'msg_2' },
    ]);
    expect(Object.keys(items[0] ?? {})[0]).toBe('type');
  });

  it('is empty without input', () => {
    expect(responsesInputItems(validateOpenAIResponsesRequest({ ...base, previous_response_id: 'resp_1' }))).toEqual(
      [],
    );
  });
});
