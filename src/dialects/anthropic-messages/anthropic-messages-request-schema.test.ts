import { describe, expect, it } from 'vitest';
import { isGatewayError, type GatewayError } from '../../errors.ts';
import {
  validateAnthropicCountTokensRequest,
  validateAnthropicMessagesRequest,
} from './anthropic-messages-request-schema.ts';

const user = { role: 'user', content: 'Hello' };
const base = { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [user] };

function rejection(
  body: Record<string, unknown>,
  validate: (body: Record<string, unknown>) => unknown = validateAnthropicMessagesRequest,
): GatewayError {
  try {
    validate(body);
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected the request to be rejected');
}

const userBlocks = (...content: unknown[]) => ({ ...base, messages: [{ role: 'user', content }] });

describe('validateAnthropicMessagesRequest', () => {
  it('accepts a minimal request and keeps unknown fields at every level', () => {
    const body = {
      ...base,
      service_tier: 'auto',
      context_management: { edits: [] },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', future_field: 1 }], future: true }],
      tools: [{ name: 'f', input_schema: { type: 'object' }, defer_loading: true }],
      thinking: { type: 'enabled', budget_tokens: 2048, display: 'summarized' },
    };
    expect(validateAnthropicMessagesRequest(body)).toEqual(body);
  });

  it('accepts every block type Claude Code and the SDK send, including ones it does not know', () => {
    const body = {
      ...base,
      system: [
        { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." },
        { type: 'text', text: 'Be careful.', cache_control: { type: 'ephemeral', ttl: '1h' } },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
            { type: 'image', source: { type: 'file', file_id: 'file_011' } },
            {
              type: 'document',
              source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' },
              title: 'Report',
              context: 'Q3',
              citations: { enabled: true },
            },
            { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Plain' } },
            { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'Chunk' }] } },
            { type: 'search_result', source: 'https://example.com', title: 'r', content: [] },
            { type: 'container_upload', file_id: 'file_012' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Let me look.', signature: 'EqQBCkYIBxgCKkDs' },
            { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3p' },
            { type: 'text', text: 'Looking.', citations: [{ type: 'char_location', cited_text: 'x' }] },
            { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'q' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: [] },
            { type: 'tool_use', id: 'toolu_01', name: 'Read', input: { file_path: '/a' } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01',
              content: [
                { type: 'text', text: 'ok' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA==' } },
                { type: 'search_result', source: 's', title: 't', content: [] },
              ],
              is_error: false,
            },
          ],
        },
      ],
      tools: [
        {
          name: 'Read',
          description: 'Reads a file',
          input_schema: { type: 'object' },
          cache_control: { type: 'ephemeral' },
        },
        { type: 'custom', name: 'Write', input_schema: { type: 'object' } },
        { type: 'web_search_20250305', name: 'web_search', max_uses: 5 },
        { type: 'bash_20250124', name: 'bash' },
        { type: 'mcp_toolset', mcp_server_name: 'github' },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      metadata: { user_id: 'user_abc' },
      stop_sequences: ['END'],
      temperature: 1,
      top_p: 0.9,
      top_k: 40,
      stream: true,
    };
    expect(validateAnthropicMessagesRequest(body)).toEqual(body);
  });

  it.each([[{ type: 'adaptive' }], [{ type: 'disabled' }], [{ type: 'enabled', budget_tokens: 1024 }]])(
    'accepts thinking %j',
    (thinking) => {
      expect(validateAnthropicMessagesRequest({ ...base, thinking }).thinking).toEqual(thinking);
    },
  );

  it.each<[string, Record<string, unknown>, string]>([
    ['a missing model', { max_tokens: 10, messages: [user] }, 'model'],
    ['an empty model', { ...base, model: '' }, 'model'],
    ['a missing max_tokens', { model: 'm', messages: [user] }, 'max_tokens'],
    ['max_tokens of 0', { ...base, max_tokens: 0 }, 'max_tokens'],
    ['a fractional max_tokens', { ...base, max_tokens: 10.5 }, 'max_tokens'],
    ['an empty messages array', { ...base, messages: [] }, 'messages'],
    ['a system role in messages', { ...base, messages: [{ role: 'system', content: 'x' }] }, 'messages.[0].role'],
    ['a numeric content', { ...base, messages: [{ role: 'user', content: 42 }] }, 'messages.[0].content'],
    ['a text block without text', userBlocks({ type: 'text' }), 'messages.[0].content.[0].text'],
    ['a block without a type', userBlocks({ text: 'x' }), 'messages.[0].content.[0].type'],
    [
      'an image with an unknown source type',
      userBlocks({ type: 'image', source: { type: 'path', path: '/tmp/a.png' } }),
      'messages.[0].content.[0].source.type',
    ],
    ['an image without a source', userBlocks({ type: 'image' }), 'messages.[0].content.[0].source'],
    [
      'a base64 image without data',
      userBlocks({ type: 'image', source: { type: 'base64', media_type: 'image/png' } }),
      'messages.[0].content.[0].source.data',
    ],
    [
      'a plain-text document with another media type',
      userBlocks({ type: 'document', source: { type: 'text', media_type: 'text/html', data: '<p>' } }),
      'messages.[0].content.[0].source.media_type',
    ],
    [
      'a tool_use whose input is not an object',
      {
        ...base,
        messages: [user, { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: '{}' }] }],
      },
      'messages.[1].content.[0].input',
    ],
    [
      'a tool_result without tool_use_id',
      userBlocks({ type: 'tool_result', content: 'x' }),
      'messages.[0].content.[0].tool_use_id',
    ],
    [
      'a tool_result text part without text',
      userBlocks({ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text' }] }),
      'messages.[0].content.[0].content.[0].text',
    ],
    [
      'a thinking block without signature',
      { ...base, messages: [user, { role: 'assistant', content: [{ type: 'thinking', thinking: 'x' }] }] },
      'messages.[1].content.[0].signature',
    ],
    ['a system block that is not text', { ...base, system: [{ type: 'image' }] }, 'system.[0].type'],
    ['a temperature above 1', { ...base, temperature: 1.5 }, 'temperature'],
    ['a negative top_k', { ...base, top_k: -1 }, 'top_k'],
    ['a top_p above 1', { ...base, top_p: 2 }, 'top_p'],
    ['a stop sequence that is not a string', { ...base, stop_sequences: [1] }, 'stop_sequences.[0]'],
    ['a numeric user_id', { ...base, metadata: { user_id: 7 } }, 'metadata.user_id'],
    ['a stream that is not a boolean', { ...base, stream: 'yes' }, 'stream'],
    ['a custom tool without input_schema', { ...base, tools: [{ name: 'f' }] }, 'tools.[0].input_schema'],
    [
      "a 'custom' tool without input_schema",
      { ...base, tools: [{ type: 'custom', name: 'f' }] },
      'tools.[0].input_schema',
    ],
    ['a tool without a name', { ...base, tools: [{ input_schema: {} }] }, 'tools.[0].name'],
    ['an unknown tool_choice type', { ...base, tool_choice: { type: 'required' } }, 'tool_choice.type'],
    ['a tool_choice tool without name', { ...base, tool_choice: { type: 'tool' } }, 'tool_choice.name'],
    [
      'a thinking budget under 1024',
      { ...base, thinking: { type: 'enabled', budget_tokens: 512 } },
      'thinking.budget_tokens',
    ],
    ['an unknown thinking type', { ...base, thinking: { type: 'maximal' } }, 'thinking.type'],
  ])('rejects %s with a 400 naming the field', (_case, body, param) => {
    const error = rejection(body);
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(error.param).toBe(param);
    expect(error.message).toContain(`'${param}'`);
  });
});

describe('validateAnthropicCountTokensRequest', () => {
  it('accepts a body without max_tokens', () => {
    const body = { model: 'claude-sonnet-4-5', messages: [user], system: 'Be brief.' };
    expect(validateAnthropicCountTokensRequest(body)).toEqual(body);
  });

  it('checks the conversation like a Messages request', () => {
    const error = rejection({ model: 'm', messages: [] }, validateAnthropicCountTokensRequest);
    expect(error.param).toBe('messages');
  });
});
