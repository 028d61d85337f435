import { describe, expect, it } from 'vitest';
import { isGatewayError, type GatewayError } from '../../errors.ts';
import { validateAnthropicMessagesRequest } from './anthropic-messages-request-schema.ts';
import { anthropicMessagesToCanonical } from './anthropic-messages-to-canonical.ts';

/** Converts a client body the way the dialect does: validate, then convert. */
function convert(body: Record<string, unknown>) {
  return anthropicMessagesToCanonical(
    validateAnthropicMessagesRequest({ model: 'claude-sonnet-4-5', max_tokens: 1024, ...body }),
  );
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
const png = { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' };
const userBlocks = (...content: unknown[]) => ({ messages: [{ role: 'user', content }] });

/** A request shaped like Claude Code's second turn: cached system blocks, tools, thinking, a tool round trip. */
const claudeCodeRequest = {
  model: 'claude-sonnet-4-5-20250929',
  max_tokens: 32000,
  stream: true,
  system: [
    {
      type: 'text',
      text: "You are Claude Code, Anthropic's official CLI for Claude.",
      cache_control: { type: 'ephemeral' },
    },
    {
      type: 'text',
      text: 'You are an interactive CLI tool that helps users with software engineering tasks.',
      cache_control: { type: 'ephemeral' },
    },
  ],
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: '<system-reminder>As you answer, use the context below.</system-reminder>' },
        { type: 'text', text: 'Why does the login page look broken?', cache_control: { type: 'ephemeral' } },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should look at the CSS and a screenshot.', signature: 'EqQBCkYIBxgCKkDs' },
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3p' },
        { type: 'text', text: "I'll read the stylesheet and take a screenshot." },
        { type: 'tool_use', id: 'toolu_01A', name: 'Read', input: { file_path: '/app/login.css' } },
        { type: 'tool_use', id: 'toolu_01B', name: 'Screenshot', input: { url: 'http://localhost:3000/login' } },
        { type: 'tool_use', id: 'toolu_01C', name: 'Bash', input: { command: 'npm test', timeout: 120000 } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_01A', content: '1\t.login { display: grid; }' },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_01B',
          content: [
            { type: 'text', text: 'Captured 1280x720.' },
            { type: 'image', source: png },
          ],
        },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_01C',
          content: [{ type: 'text', text: 'npm ERR! missing script: test' }],
          is_error: true,
        },
        { type: 'text', text: 'Also check the PDF spec.' },
        {
          type: 'document',
          source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' },
          title: 'design-spec.pdf',
          cache_control: { type: 'ephemeral' },
        },
      ],
    },
  ],
  tools: [
    {
      name: 'Read',
      description: 'Reads a file from the local filesystem.',
      input_schema: {
        type: 'object',
        properties: { file_path: { type: 'string' } },
        required: ['file_path'],
        additionalProperties: false,
        $schema: 'http://json-schema.org/draft-07/schema#',
      },
    },
    {
      name: 'Screenshot',
      description: 'Takes a screenshot of a page.',
      input_schema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
    },
    {
      name: 'Bash',
      description: 'Executes a bash command.',
      input_schema: { type: 'object', properties: { command: { type: 'string' }, timeout: { type: 'number' } } },
      cache_control: { type: 'ephemeral' },
    },
  ],
  tool_choice: { type: 'auto' },
  thinking: { type: 'enabled', budget_tokens: 31999 },
  metadata: { user_id: 'user_2f1c_account__session_8e0d' },
  temperature: 1,
};

describe('anthropicMessagesToCanonical', () => {
  it('converts a minimal request: max_tokens, no stream, usage always requested', () => {
    expect(convert({ messages: [user] })).toEqual({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      stream: false,
      streamIncludeUsage: true,
      maxTokens: 1024,
    });
  });

  it('converts a Claude Code turn: system, tool round trip with an image and an error, thinking, a PDF', () => {
    const canonical = anthropicMessagesToCanonical(validateAnthropicMessagesRequest(claudeCodeRequest));
    expect(canonical).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      stream: true,
      streamIncludeUsage: true,
      maxTokens: 32000,
      temperature: 1,
      user: 'user_2f1c_account__session_8e0d',
      reasoningBudgetTokens: 31999,
      reasoningEffort: 'high',
      toolChoice: { type: 'auto' },
      tools: [
        {
          name: 'Read',
          description: 'Reads a file from the local filesystem.',
          parameters: claudeCodeRequest.tools[0]!.input_schema,
        },
        {
          name: 'Screenshot',
          description: 'Takes a screenshot of a page.',
          parameters: claudeCodeRequest.tools[1]!.input_schema,
        },
        { name: 'Bash', description: 'Executes a bash command.', parameters: claudeCodeRequest.tools[2]!.input_schema },
      ],
      messages: [
        {
          role: 'system',
          content:
            "You are Claude Code, Anthropic's official CLI for Claude.\n\n" +
            'You are an interactive CLI tool that helps users with software engineering tasks.',
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>As you answer, use the context below.</system-reminder>' },
            { type: 'text', text: 'Why does the login page look broken?' },
          ],
        },
        {
          role: 'assistant',
          content: [{ type: 'text', text: "I'll read the stylesheet and take a screenshot." }],
          toolCalls: [
            { id: 'toolu_01A', name: 'Read', arguments: '{"file_path":"/app/login.css"}' },
            { id: 'toolu_01B', name: 'Screenshot', arguments: '{"url":"http://localhost:3000/login"}' },
            { id: 'toolu_01C', name: 'Bash', arguments: '{"command":"npm test","timeout":120000}' },
          ],
        },
        { role: 'tool', toolCallId: 'toolu_01A', content: '1\t.login { display: grid; }' },
        { role: 'tool', toolCallId: 'toolu_01B', content: 'Captured 1280x720.' },
        { role: 'tool', toolCallId: 'toolu_01C', content: 'Error: npm ERR! missing script: test' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Images returned by tool toolu_01B:' },
            { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=' },
            { type: 'text', text: 'Also check the PDF spec.' },
            { type: 'file', mediaType: 'application/pdf', data: 'JVBERi0xLjQK', filename: 'design-spec.pdf' },
          ],
        },
      ],
    });
  });

  it('joins a string system prompt as is and skips an empty one', () => {
    expect(convert({ system: 'Be brief.', messages: [user] }).messages[0]).toEqual({
      role: 'system',
      content: 'Be brief.',
    });
    expect(convert({ system: '', messages: [user] }).messages).toHaveLength(1);
    expect(convert({ system: [], messages: [user] }).messages).toHaveLength(1);
  });

  it('converts images by base64 and by URL', () => {
    const { messages } = convert(
      userBlocks(
        { type: 'text', text: 'Compare these.' },
        { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
      ),
    );
    expect(messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare these.' },
          { type: 'image', url: 'data:image/jpeg;base64,/9j/4AAQ' },
          { type: 'image', url: 'https://example.com/cat.png' },
        ],
      },
    ]);
  });

  it('converts documents: PDF by URL to a file, plain text and content documents to text under their title', () => {
    const { messages } = convert(
      userBlocks(
        { type: 'document', source: { type: 'url', url: 'https://example.com/paper.pdf' } },
        {
          type: 'document',
          source: { type: 'text', media_type: 'text/plain', data: 'The grass is green.' },
          title: 'Facts',
          context: 'Trusted',
          citations: { enabled: true },
        },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Untitled text.' } },
        {
          type: 'document',
          title: 'Chunks',
          source: {
            type: 'content',
            content: [
              { type: 'text', text: 'First chunk.' },
              { type: 'text', text: 'Second chunk.' },
            ],
          },
        },
        { type: 'document', source: { type: 'content', content: 'One string.' } },
      ),
    );
    expect(messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'file', mediaType: 'application/pdf', url: 'https://example.com/paper.pdf' },
        { type: 'text', text: '# Facts\n\nThe grass is green.' },
        { type: 'text', text: 'Untitled text.' },
        { type: 'text', text: '# Chunks' },
        { type: 'text', text: 'First chunk.' },
        { type: 'text', text: 'Second chunk.' },
        { type: 'text', text: 'One string.' },
      ],
    });
  });

  it('converts string content of both roles, and an assistant turn with only tool calls', () => {
    const { messages } = convert({
      messages: [
        user,
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} }] },
      ],
    });
    expect(messages.slice(1)).toEqual([
      { role: 'assistant', content: [{ type: 'text', text: 'Hello!' }], toolCalls: [] },
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      { role: 'assistant', content: [], toolCalls: [{ id: 'toolu_1', name: 'weather', arguments: '{}' }] },
    ]);
  });

  it('emits only tool messages for a turn of only tool results, keeping empty and error results apart', () => {
    const { messages } = convert(
      userBlocks(
        { type: 'tool_result', tool_use_id: 'toolu_1' },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: '', is_error: true },
        { type: 'tool_result', tool_use_id: 'toolu_3', content: 'timeout', is_error: true },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_4',
          content: [
            { type: 'text', text: 'line 1' },
            { type: 'text', text: 'line 2' },
          ],
        },
      ),
    );
    expect(messages).toEqual([
      { role: 'tool', toolCallId: 'toolu_1', content: '' },
      { role: 'tool', toolCallId: 'toolu_2', content: '' },
      { role: 'tool', toolCallId: 'toolu_3', content: 'Error: timeout' },
      { role: 'tool', toolCallId: 'toolu_4', content: 'line 1\nline 2' },
    ]);
  });

  it('puts tool results first even when text comes before them, and titles files a tool returned', () => {
    const { messages } = convert(
      userBlocks(
        { type: 'text', text: 'Here you go.' },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_9',
          content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/out.pdf' } }],
        },
      ),
    );
    expect(messages).toEqual([
      { role: 'tool', toolCallId: 'toolu_9', content: '' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Files returned by tool toolu_9:' },
          { type: 'file', mediaType: 'application/pdf', url: 'https://example.com/out.pdf' },
          { type: 'text', text: 'Here you go.' },
        ],
      },
    ]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'a server tool use in history',
      {
        messages: [
          user,
          {
            role: 'assistant',
            content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } }],
          },
        ],
      },
      'messages.[1].content.[0].type',
    ],
    [
      'a web search result in history',
      userBlocks({ type: 'text', text: 'x' }, { type: 'web_search_tool_result', tool_use_id: 's', content: [] }),
      'messages.[0].content.[1].type',
    ],
    [
      'a search result inside a tool result',
      userBlocks({
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [{ type: 'search_result', source: 'https://example.com', title: 'r', content: [] }],
      }),
      'messages.[0].content.[0].content.[0].type',
    ],
  ])('refuses %s, which only Anthropic can replay', (_case, body, param) => {
    const error = rejection(body);
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message).toMatch(/^Content blocks of type '\w+' can only be replayed to Anthropic models/);
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'a Files API image',
      userBlocks({ type: 'image', source: { type: 'file', file_id: 'file_01' } }),
      'messages.[0].content.[0].source',
    ],
    [
      'a Files API document',
      userBlocks({ type: 'document', source: { type: 'file', file_id: 'file_01' } }),
      'messages.[0].content.[0].source',
    ],
  ])('refuses %s', (_case, body, param) => {
    const error = rejection(body);
    expect(error.param).toBe(param);
    expect(error.message).toContain('Files API');
  });

  it('refuses blocks in the wrong role', () => {
    expect(
      rejection({ messages: [{ role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 't' }] }] }).param,
    ).toBe('messages.[0].content.[0].type');
    expect(rejection(userBlocks({ type: 'tool_use', id: 't', name: 'f', input: {} })).message).toBe(
      "'tool_use' blocks belong in assistant messages.",
    );
  });

  it('converts custom tools and refuses server tools by name and type', () => {
    expect(
      convert({
        messages: [user],
        tools: [{ type: 'custom', name: 'lookup', input_schema: { type: 'object' }, strict: true }],
      }).tools,
    ).toEqual([{ name: 'lookup', parameters: { type: 'object' }, strict: true }]);
    const error = rejection({
      messages: [user],
      tools: [
        { name: 'Read', input_schema: { type: 'object' } },
        { type: 'web_search_20250305', name: 'web_search', max_uses: 5 },
      ],
    });
    expect(error.param).toBe('tools.[1]');
    expect(error.message).toBe(
      "The tool 'web_search' (web_search_20250305) is an Anthropic server tool; this model's provider cannot run it.",
    );
    expect(rejection({ messages: [user], tools: [{ type: 'mcp_toolset', mcp_server_name: 'gh' }] }).message).toBe(
      "The tool of type 'mcp_toolset' is an Anthropic server tool; this model's provider cannot run it.",
    );
  });

  it('leaves out an empty tools list', () => {
    expect(convert({ messages: [user], tools: [] }).tools).toBeUndefined();
  });

  it.each<[Record<string, unknown>, Record<string, unknown>]>([
    [{ type: 'auto' }, { toolChoice: { type: 'auto' } }],
    [{ type: 'any' }, { toolChoice: { type: 'required' } }],
    [{ type: 'none' }, { toolChoice: { type: 'none' } }],
    [{ type: 'tool', name: 'Read' }, { toolChoice: { type: 'tool', name: 'Read' } }],
    [
      { type: 'auto', disable_parallel_tool_use: true },
      { toolChoice: { type: 'auto' }, parallelToolCalls: false },
    ],
    [
      { type: 'tool', name: 'Read', disable_parallel_tool_use: true },
      { toolChoice: { type: 'tool', name: 'Read' }, parallelToolCalls: false },
    ],
    [{ type: 'any', disable_parallel_tool_use: false }, { toolChoice: { type: 'required' } }],
  ])('maps tool_choice %j', (toolChoice, expected) => {
    const canonical = convert({ messages: [user], tool_choice: toolChoice });
    expect({ toolChoice: canonical.toolChoice, parallelToolCalls: canonical.parallelToolCalls }).toEqual({
      parallelToolCalls: undefined,
      ...expected,
    });
  });

  it.each<[Record<string, unknown>, Record<string, unknown>]>([
    [{ thinking: { type: 'enabled', budget_tokens: 1024 } }, { reasoningEffort: 'low', reasoningBudgetTokens: 1024 }],
    [{ thinking: { type: 'enabled', budget_tokens: 4095 } }, { reasoningEffort: 'low', reasoningBudgetTokens: 4095 }],
    [
      { thinking: { type: 'enabled', budget_tokens: 4096 } },
      { reasoningEffort: 'medium', reasoningBudgetTokens: 4096 },
    ],
    [
      { thinking: { type: 'enabled', budget_tokens: 16383 } },
      { reasoningEffort: 'medium', reasoningBudgetTokens: 16383 },
    ],
    [
      { thinking: { type: 'enabled', budget_tokens: 16384 } },
      { reasoningEffort: 'high', reasoningBudgetTokens: 16384 },
    ],
    [{ thinking: { type: 'adaptive' } }, { reasoningEffort: 'medium' }],
    [{ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } }, { reasoningEffort: 'low' }],
    [{ thinking: { type: 'adaptive' }, output_config: { effort: 'max' } }, { reasoningEffort: 'xhigh' }],
    [{ output_config: { effort: 'high' } }, { reasoningEffort: 'high' }],
    [{ thinking: { type: 'disabled' }, output_config: { effort: 'high' } }, {}],
    [{}, {}],
  ])('maps %j to reasoning %j', (fields, expected) => {
    const canonical = convert({ max_tokens: 32000, messages: [user], ...fields });
    expect({
      reasoningEffort: canonical.reasoningEffort,
      reasoningBudgetTokens: canonical.reasoningBudgetTokens,
    }).toEqual({ reasoningEffort: undefined, reasoningBudgetTokens: undefined, ...expected });
  });

  it('maps sampling, stop sequences, user and stream', () => {
    const canonical = convert({
      messages: [user],
      stream: true,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['\n\nHuman:', 'END'],
      metadata: { user_id: 'user-42' },
    });
    expect(canonical).toMatchObject({
      stream: true,
      streamIncludeUsage: true,
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      stop: ['\n\nHuman:', 'END'],
      user: 'user-42',
    });
    const plain = convert({ messages: [user], stop_sequences: [], metadata: { user_id: null } });
    expect(plain.stop).toBeUndefined();
    expect(plain.user).toBeUndefined();
  });

  it('maps an output_config JSON schema to a json_schema response format', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    expect(
      convert({ messages: [user], output_config: { format: { type: 'json_schema', schema } } }).responseFormat,
    ).toEqual({ type: 'json_schema', name: 'response', schema });
    expect(convert({ messages: [user], output_format: { type: 'json_schema', schema } }).responseFormat).toEqual({
      type: 'json_schema',
      name: 'response',
      schema,
    });
  });
});
