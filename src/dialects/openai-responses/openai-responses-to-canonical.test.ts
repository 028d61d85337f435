import { describe, expect, it } from 'vitest';
import { isGatewayError, type GatewayError } from '../../errors.ts';
import { validateOpenAIResponsesRequest } from './openai-responses-request-schema.ts';
import { openAIResponsesToCanonical } from './openai-responses-to-canonical.ts';

/** Converts a client body the way the dialect does: validate, then convert. */
function convert(body: Record<string, unknown>, history: Record<string, unknown>[] = []) {
  return openAIResponsesToCanonical(validateOpenAIResponsesRequest({ model: 'gpt-5-codex', ...body }), history);
}

function rejection(body: Record<string, unknown>, history: Record<string, unknown>[] = []): GatewayError {
  try {
    convert(body, history);
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected the conversion to be rejected');
}

const userText = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
/** A body whose input is one user message with the given parts. */
const userParts = (...content: unknown[]) => ({ input: [{ role: 'user', content }] });
/** The canonical user message with one text part. */
const said = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] });
const environment = '<environment_context>\n  <cwd>/home/dev/shop</cwd>\n</environment_context>';
const png = 'data:image/png;base64,iVBORw0KGgo=';
const call = (call_id: string, name: string, args = '{}') => ({
  type: 'function_call',
  call_id,
  name,
  arguments: args,
});
const output = (call_id: string, text: string) => ({ type: 'function_call_output', call_id, output: text });

const shellParameters = {
  type: 'object',
  properties: { command: { type: 'array', items: { type: 'string' } }, timeout_ms: { type: 'number' } },
  required: ['command'],
  additionalProperties: false,
};

/** A request shaped like Codex's second turn: instructions, a developer message, tools, reasoning, two tool rounds. */
const codexRequest = {
  model: 'gpt-5-codex',
  instructions: 'You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI.',
  input: [
    {
      type: 'message',
      role: 'developer',
      content: [
        { type: 'input_text', text: '<permissions instructions>Sandbox: workspace-write.</permissions instructions>' },
      ],
    },
    userText(environment),
    userText('The cart test fails, fix it.'),
    {
      type: 'reasoning',
      id: 'rs_0a1b',
      summary: [{ type: 'summary_text', text: '**Inspecting the failing test**' }],
      content: null,
      encrypted_content: 'gAAAAABo_encrypted',
    },
    {
      type: 'message',
      role: 'assistant',
      id: 'msg_0a1c',
      status: 'completed',
      phase: 'commentary',
      content: [{ type: 'output_text', text: 'Running the tests first.', annotations: [], logprobs: [] }],
    },
    {
      type: 'function_call',
      id: 'fc_0a1d',
      status: 'completed',
      name: 'shell',
      arguments: '{"command":["bash","-lc","pnpm test cart"]}',
      call_id: 'call_Sh1',
    },
    call('call_Sh2', 'shell', '{"command":["bash","-lc","cat src/cart.ts"]}'),
    output('call_Sh1', '{"output":"FAIL src/cart.test.ts\\n  expected 3, got 2","metadata":{"exit_code":1}}'),
    output('call_Sh2', 'export function total() {}'),
    { type: 'reasoning', id: 'rs_0a1e', summary: [], encrypted_content: 'gAAAAABo_more' },
    call('call_Pa1', 'apply_patch', '{"input":"*** Begin Patch\\n*** End Patch"}'),
    output('call_Pa1', 'Done!'),
  ],
  tools: [
    {
      type: 'function',
      name: 'shell',
      description: 'Runs a shell command.',
      strict: false,
      parameters: shellParameters,
    },
    {
      type: 'function',
      name: 'update_plan',
      description: 'Updates the task plan.',
      strict: false,
      parameters: { type: 'object', properties: { plan: { type: 'array' } }, required: ['plan'] },
    },
    { type: 'function', name: 'apply_patch', description: 'Edits files.', parameters: null, strict: null },
    { type: 'function', name: 'view_image', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  ],
  tool_choice: 'auto',
  parallel_tool_calls: false,
  reasoning: { effort: 'medium', summary: 'auto' },
  store: false,
  stream: true,
  include: ['reasoning.encrypted_content'],
  prompt_cache_key: '0199a0f1-5f2c-7e33-9c4e-2a8b1c0d9e7f',
};

describe('openAIResponsesToCanonical', () => {
  it('converts a Codex request: instructions, developer message, tool rounds, reasoning dropped', () => {
    expect(convert(codexRequest)).toEqual({
      model: 'gpt-5-codex',
      stream: true,
      streamIncludeUsage: true,
      messages: [
        { role: 'system', content: codexRequest.instructions },
        { role: 'system', content: '<permissions instructions>Sandbox: workspace-write.</permissions instructions>' },
        said(environment),
        said('The cart test fails, fix it.'),
        {
          role: 'assistant',
          content: [{ type: 'text', text: 'Running the tests first.' }],
          toolCalls: [
            { id: 'call_Sh1', name: 'shell', arguments: '{"command":["bash","-lc","pnpm test cart"]}' },
            { id: 'call_Sh2', name: 'shell', arguments: '{"command":["bash","-lc","cat src/cart.ts"]}' },
          ],
        },
        {
          role: 'tool',
          toolCallId: 'call_Sh1',
          content: '{"output":"FAIL src/cart.test.ts\\n  expected 3, got 2","metadata":{"exit_code":1}}',
        },
        { role: 'tool', toolCallId: 'call_Sh2', content: 'export function total() {}' },
        {
          role: 'assistant',
          content: [],
          toolCalls: [
            { id: 'call_Pa1', name: 'apply_patch', arguments: '{"input":"*** Begin Patch\\n*** End Patch"}' },
          ],
        },
        { role: 'tool', toolCallId: 'call_Pa1', content: 'Done!' },
      ],
      tools: [
        { name: 'shell', description: 'Runs a shell command.', parameters: shellParameters, strict: false },
        {
          name: 'update_plan',
          description: 'Updates the task plan.',
          parameters: { type: 'object', properties: { plan: { type: 'array' } }, required: ['plan'] },
          strict: false,
        },
        { name: 'apply_patch', description: 'Edits files.', parameters: { type: 'object', properties: {} } },
        { name: 'view_image', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
      ],
      toolChoice: { type: 'auto' },
      parallelToolCalls: false,
      reasoningEffort: 'medium',
    });
  });

  it('turns a string input into one user message and maps the sampling fields', () => {
    expect(
      convert({
        input: 'Write a haiku about gateways.',
        max_output_tokens: 500,
        temperature: 0.7,
        top_p: 0.9,
        user: 'user-1234',
        tool_choice: 'required',
      }),
    ).toEqual({
      model: 'gpt-5-codex',
      messages: [said('Write a haiku about gateways.')],
      stream: false,
      streamIncludeUsage: true,
      maxTokens: 500,
      temperature: 0.7,
      topP: 0.9,
      user: 'user-1234',
      toolChoice: { type: 'required' },
    });
  });

  it('prefers safety_identifier over user, and maps the other tool choices and max effort', () => {
    const canonical = convert({
      input: 'Hi',
      user: 'old',
      safety_identifier: 'hashed-42',
      tool_choice: { type: 'function', name: 'get_weather' },
      reasoning: { effort: 'max' },
    });
    expect(canonical.user).toBe('hashed-42');
    expect(canonical.toolChoice).toEqual({ type: 'tool', name: 'get_weather' });
    expect(canonical.reasoningEffort).toBe('xhigh');
    expect(convert({ input: 'Hi', tool_choice: 'none' }).toolChoice).toEqual({ type: 'none' });
    expect(convert({ input: 'Hi', reasoning: { effort: 'none' } }).reasoningEffort).toBe('none');
  });

  it('maps a responses.parse-style json_schema text format', () => {
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, date: { type: 'string' }, participants: { type: 'array' } },
      required: ['name', 'date', 'participants'],
      additionalProperties: false,
    };
    const canonical = convert({
      input: [
        { role: 'system', content: 'Extract the event information.' },
        { role: 'user', content: 'Alice and Bob are going to a science fair on Friday.' },
      ],
      text: { format: { type: 'json_schema', name: 'CalendarEvent', schema, strict: true, description: 'An event' } },
    });
    expect(canonical.responseFormat).toEqual({
      type: 'json_schema',
      name: 'CalendarEvent',
      schema,
      strict: true,
      description: 'An event',
    });
    expect(canonical.messages[0]).toEqual({ role: 'system', content: 'Extract the event information.' });
    expect(convert({ input: 'Hi', text: { format: { type: 'json_object' } } }).responseFormat).toEqual({
      type: 'json_object',
    });
    expect(convert({ input: 'Hi', text: { format: { type: 'text' } } }).responseFormat).toEqual({ type: 'text' });
  });

  it('converts images and files in user messages', () => {
    const canonical = convert({
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_file', filename: 'invoice.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjcK' },
            { type: 'input_file', file_data: 'JVBERi0xLjQK' },
            { type: 'input_file', filename: 'notes.txt', file_data: 'data:text/plain;charset=utf-8;base64,aGk=' },
            { type: 'input_file', file_url: 'https://example.com/paper.pdf' },
            { type: 'input_image', image_url: 'https://example.com/chart.png', detail: 'low' },
            { type: 'input_image', image_url: png, detail: 'original' },
            { type: 'input_image', image_url: png },
            { type: 'input_text', text: 'Summarise these.' },
          ],
        },
      ],
    });
    expect(canonical.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'file', mediaType: 'application/pdf', data: 'JVBERi0xLjcK', filename: 'invoice.pdf' },
          { type: 'file', mediaType: 'application/pdf', data: 'JVBERi0xLjQK' },
          { type: 'file', mediaType: 'text/plain', data: 'aGk=', filename: 'notes.txt' },
          { type: 'file', mediaType: 'application/pdf', url: 'https://example.com/paper.pdf' },
          { type: 'image', url: 'https://example.com/chart.png', detail: 'low' },
          { type: 'image', url: png, detail: 'high' },
          { type: 'image', url: png },
          { type: 'text', text: 'Summarise these.' },
        ],
      },
    ]);
  });

  it('joins assistant output text and refusals, and system text parts', () => {
    const canonical = convert({
      input: [
        {
          role: 'developer',
          content: [
            { type: 'input_text', text: 'Rule one.' },
            { type: 'input_text', text: 'Rule two.' },
          ],
        },
        userText('Hi'),
        {
          type: 'message',
          role: 'assistant',
          content: [
            { type: 'output_text', text: 'Part one, ', annotations: [] },
            { type: 'output_text', text: 'part two. ', annotations: [] },
            { type: 'refusal', refusal: 'I cannot help with the rest.' },
          ],
        },
        { role: 'assistant', content: 'Plain string.' },
        userText('Go on'),
      ],
    });
    expect(canonical.messages).toEqual([
      { role: 'system', content: 'Rule one.\nRule two.' },
      said('Hi'),
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'Part one, part two. I cannot help with the rest.' }],
        toolCalls: [],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Plain string.' }], toolCalls: [] },
      said('Go on'),
    ]);
  });

  it('puts images a tool returned in a user message after the tool messages', () => {
    const base = [
      userText('Why does the login page look broken?'),
      call('call_css', 'read_file'),
      call('call_shot', 'screenshot'),
      output('call_css', '.login { display: grid; }'),
      {
        type: 'function_call_output',
        call_id: 'call_shot',
        output: [
          { type: 'input_text', text: 'Captured 1280x720.' },
          { type: 'input_image', image_url: png, detail: 'auto' },
          { type: 'input_text', text: 'Viewport: desktop.' },
        ],
      },
    ];
    const toolMessages = [
      { role: 'tool', toolCallId: 'call_css', content: '.login { display: grid; }' },
      { role: 'tool', toolCallId: 'call_shot', content: 'Captured 1280x720.\nViewport: desktop.' },
    ];
    const images = [
      { type: 'text', text: 'Images returned by tool call_shot:' },
      { type: 'image', url: png, detail: 'auto' },
    ];
    // The next user message opens with them.
    expect(convert({ input: [...base, userText('Fix it.')] }).messages.slice(2)).toEqual([
      ...toolMessages,
      { role: 'user', content: [...images, { type: 'text', text: 'Fix it.' }] },
    ]);
    // Without one, they become a user message of their own, before the model's next call.
    expect(convert({ input: [...base, call('call_fix', 'apply_patch')] }).messages.slice(2)).toEqual([
      ...toolMessages,
      { role: 'user', content: images },
      { role: 'assistant', content: [], toolCalls: [{ id: 'call_fix', name: 'apply_patch', arguments: '{}' }] },
    ]);
    expect(convert({ input: base }).messages.at(-1)).toEqual({ role: 'user', content: images });
  });

  it('prepends the stored history, without carrying over earlier instructions', () => {
    const history = [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is the weather in Paris?' }] },
      { id: 'rs_resp1_0', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Use the tool.' }] },
      {
        id: 'fc_resp1_1',
        type: 'function_call',
        status: 'completed',
        arguments: '{"city":"Paris"}',
        call_id: 'call_w1',
        name: 'get_weather',
      },
    ];
    const canonical = convert(
      {
        instructions: 'Answer in one sentence.',
        previous_response_id: 'resp_1',
        input: [output('call_w1', '{"temperature_c":18}')],
      },
      history,
    );
    expect(canonical.messages).toEqual([
      { role: 'system', content: 'Answer in one sentence.' },
      said('What is the weather in Paris?'),
      {
        role: 'assistant',
        content: [],
        toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      },
      { role: 'tool', toolCallId: 'call_w1', content: '{"temperature_c":18}' },
    ]);
  });

  it('reads history items rendered by the gateway, message ids and refusals included', () => {
    const history = [
      userText('Hi'),
      {
        id: 'msg_abc_0',
        type: 'message',
        status: 'completed',
        content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Hello!' }],
        role: 'assistant',
      },
    ];
    expect(convert({ input: 'And you?' }, history).messages).toEqual([
      said('Hi'),
      { role: 'assistant', content: [{ type: 'text', text: 'Hello!' }], toolCalls: [] },
      said('And you?'),
    ]);
  });

  it.each<[param: string, message: string, body: Record<string, unknown>]>([
    [
      'input.[1]',
      "Item references need the gateway's stored responses; send the item itself.",
      { input: [userText('Hi'), { type: 'item_reference', id: 'msg_1' }] },
    ],
    ['input.[0]', 'Item references need', { input: [{ id: 'msg_1' }] }],
    ['input.[1].type', "'web_search_call'", { input: [userText('Hi'), { type: 'web_search_call', id: 'ws_1' }] }],
    ['input.[0].content.[0].file_id', 'file_id', userParts({ type: 'input_image', file_id: 'file-abc' })],
    ['input.[0].content.[0].file_id', 'file_id', userParts({ type: 'input_file', file_id: 'file-abc' })],
    [
      'input.[0].output.[0].file_id',
      'file_id',
      { input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_file', file_id: 'f' }] }] },
    ],
    ['input.[0].content.[0].file_data', 'base64', userParts({ type: 'input_file', file_data: 'data:text/plain,hi' })],
    ['input.[0].content.[0].type', "'input_audio'", userParts({ type: 'input_audio', input_audio: {} })],
    [
      'input.[0].content.[0].type',
      'text only',
      { input: [{ role: 'system', content: [{ type: 'input_image', image_url: png }] }] },
    ],
    [
      'tools.[1]',
      "The built-in tool 'web_search' runs only on upstreams that have it natively; this model's deployment does not.",
      { input: 'Hi', tools: [{ type: 'function', name: 'f' }, { type: 'web_search' }] },
    ],
    [
      'tool_choice',
      "'allowed_tools'",
      { input: 'Hi', tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [] } },
    ],
    ['tool_choice', "'file_search'", { input: 'Hi', tool_choice: { type: 'file_search' } }],
    ['input', 'no input', { instructions: 'Be brief.' }],
  ])('refuses what it cannot translate, naming %s (%s)', (param, message, body) => {
    const error = rejection(body);
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message).toContain(message);
  });

  it('refuses history items it cannot replay, naming previous_response_id', () => {
    const body = { input: 'Next', previous_response_id: 'resp_1' };
    const searched = rejection(body, [userText('News?'), { type: 'web_search_call', id: 'ws_1', status: 'completed' }]);
    expect(searched.param).toBe('previous_response_id');
    expect(searched.message).toContain("'web_search_call'");
    const unreadable = rejection(body, [{ type: 'message', role: 'user' }]);
    expect(unreadable.param).toBe('previous_response_id');
  });
});
