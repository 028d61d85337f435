import { describe, expect, it } from 'vitest';
import type {
  CanonicalChatRequest,
  CanonicalMessage,
  CanonicalTool,
  UpstreamTarget,
} from '../../src/canonical/index.ts';
import { isGatewayError, type GatewayError } from '../../src/errors.ts';
import { parseJson } from '../../src/framing/index.ts';
import { jsonResponseToolName } from './anthropic-json-response.ts';
import { buildAnthropicChatRequest } from './anthropic-request.ts';
import { anthropicTranslator } from './anthropic-translator.ts';

const target: UpstreamTarget = {
  providerName: 'anthropic',
  baseURL: 'https://api.anthropic.com/v1',
  model: 'claude-sonnet-4-5-20250929',
  apiKey: 'sk-ant-test',
  headers: {},
  options: {},
};

const hello: CanonicalMessage = { role: 'user', content: [{ type: 'text', text: 'Hello' }] };

function request(overrides: Partial<CanonicalChatRequest> = {}): CanonicalChatRequest {
  return { model: 'claude', messages: [hello], stream: false, streamIncludeUsage: false, ...overrides };
}

function body(canonical: CanonicalChatRequest, targetOverrides: Partial<UpstreamTarget> = {}): Record<string, unknown> {
  const upstream = buildAnthropicChatRequest(canonical, { ...target, ...targetOverrides });
  const parsed = parseJson(upstream.body ?? '');
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value as Record<string, unknown>;
}

function rejection(canonical: CanonicalChatRequest, targetOverrides: Partial<UpstreamTarget> = {}): GatewayError {
  try {
    buildAnthropicChatRequest(canonical, { ...target, ...targetOverrides });
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected the request to be rejected');
}

const weatherTool: CanonicalTool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
};

describe('buildAnthropicChatRequest: the HTTP request', () => {
  it('posts to {baseURL}/messages with the key, the default version and JSON', () => {
    const upstream = buildAnthropicChatRequest(request(), target);
    expect(upstream.url).toBe('https://api.anthropic.com/v1/messages');
    expect(upstream.method).toBe('POST');
    expect(upstream.headers).toEqual({
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'x-api-key': 'sk-ant-test',
    });
  });

  it('takes anthropic-version from the options and adds configured headers, lower-cased so they replace defaults', () => {
    const upstream = buildAnthropicChatRequest(request(), {
      ...target,
      apiKey: undefined,
      options: { anthropicVersion: '2024-01-01' },
      headers: { 'Anthropic-Beta': 'prompt-caching-2024-07-31', 'X-Team': 'search' },
    });
    expect(upstream.headers).toEqual({
      'content-type': 'application/json',
      'anthropic-version': '2024-01-01',
      'anthropic-beta': 'prompt-caching-2024-07-31',
      'x-team': 'search',
    });
  });

  it('rejects invalid deployment options as a gateway configuration error', () => {
    const error = rejection(request(), { options: { defaultMaxTokens: -5 } });
    expect(error.status).toBe(500);
    expect(error.code).toBe('invalid_provider_options');
    expect(error.message).toContain('defaultMaxTokens');
  });
});

describe('buildAnthropicChatRequest: the body', () => {
  it('sends the upstream model and a default max_tokens, and nothing the client did not ask for', () => {
    expect(body(request())).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      max_tokens: 4096,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
    });
  });

  it("keeps the client's max_tokens, or the deployment's default", () => {
    expect(body(request({ maxTokens: 123 })).max_tokens).toBe(123);
    expect(body(request(), { options: { defaultMaxTokens: 8000 } }).max_tokens).toBe(8000);
  });

  it('maps sampling, stop, user and stream', () => {
    const sent = body(
      request({
        temperature: 0.2,
        topP: 0.9,
        topK: 40,
        stop: ['END', '###'],
        user: 'user-42',
        stream: true,
        streamIncludeUsage: true,
      }),
    );
    expect(sent).toMatchObject({
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['END', '###'],
      metadata: { user_id: 'user-42' },
      stream: true,
    });
    expect(body(request({ stop: [] }))).not.toHaveProperty('stop_sequences');
  });

  it('ignores seed and the penalties, which Anthropic has no equivalent for', () => {
    const sent = body(request({ seed: 7, presencePenalty: 0.5, frequencyPenalty: 0.5, n: 1 }));
    expect(Object.keys(sent).sort()).toEqual(['max_tokens', 'messages', 'model']);
  });

  it('declares no n > 1 and no log probabilities, which the core refuses before it (chatFeatures)', () => {
    expect(anthropicTranslator.chatFeatures).not.toContain('n');
    expect(anthropicTranslator.chatFeatures).not.toContain('logprobs');
  });

  it.each([[{ temperature: 1.5 }, 'temperature']] as const)(
    'rejects what Anthropic cannot do: %o',
    (overrides, param) => {
      const error = rejection(request(overrides));
      expect(error.status).toBe(400);
      expect(error.type).toBe('invalid_request_error');
      expect(error.param).toBe(param);
    },
  );
});

describe('buildAnthropicChatRequest: messages', () => {
  it('joins system messages, wherever they stand, into system', () => {
    const sent = body(
      request({
        messages: [
          { role: 'system', content: 'You are terse.' },
          hello,
          { role: 'system', content: 'Answer in French.' },
          { role: 'assistant', content: [{ type: 'text', text: 'Bonjour' }], toolCalls: [] },
        ],
      }),
    );
    expect(sent.system).toBe('You are terse.\n\nAnswer in French.');
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Bonjour' }] },
    ]);
  });

  // Defect (issue 8, item 16a): a conversation of only a system message went out as `messages: []`, which Anthropic
  // refuses with a 400, where OpenAI answers it. The system prompt is then sent as the one user turn.
  it('sends a system-only conversation as one user turn carrying the system prompt, as OpenAI answers it', () => {
    const sent = body(request({ messages: [{ role: 'system', content: 'Write a haiku about the sea.' }] }));
    expect(sent.system).toBeUndefined();
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Write a haiku about the sea.' }] },
    ]);
  });

  it('does the same when the other messages leave nothing to send (empty text), joining the system messages', () => {
    const sent = body(
      request({
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'system', content: 'Name three colours.' },
          { role: 'user', content: [{ type: 'text', text: '' }] },
        ],
      }),
    );
    expect(sent.system).toBeUndefined();
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'You are terse.\n\nName three colours.' }] },
    ]);
  });

  it('rejects a conversation with nothing to send at all, naming messages', () => {
    const error = rejection(
      request({
        messages: [
          { role: 'system', content: '' },
          { role: 'user', content: [{ type: 'text', text: '' }] },
        ],
      }),
    );
    expect([error.status, error.type, error.param]).toEqual([400, 'invalid_request_error', 'messages']);
    expect(error.message).toBe('Every message is empty: Anthropic models need some text to answer.');
  });

  it('merges consecutive turns of one role so that roles alternate, dropping empty text', () => {
    const sent = body(
      request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'One' }], name: 'ann' },
          { role: 'user', content: [{ type: 'text', text: 'Two' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'A' }], toolCalls: [] },
          { role: 'assistant', content: [{ type: 'text', text: '' }], toolCalls: [] },
          { role: 'assistant', content: [{ type: 'text', text: 'B' }], toolCalls: [] },
          { role: 'user', content: [{ type: 'text', text: 'Three' }] },
        ],
      }),
    );
    expect(sent.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'One' },
          { type: 'text', text: 'Two' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'A' },
          { type: 'text', text: 'B' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Three' }] },
    ]);
  });

  it('sends data: URL images as base64 and https URLs as url sources', () => {
    const sent = body(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Compare these' },
              { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' },
              { type: 'image', url: 'https://example.com/cat.jpg' },
            ],
          },
        ],
      }),
    );
    expect(sent.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare these' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      },
    ]);
  });

  it.each([
    ['data:image/png,rawbytes', 'messages.[0].content.[1]'],
    ['ftp://example.com/cat.jpg', 'messages.[0].content.[1]'],
  ])('rejects the image %s', (url, param) => {
    const error = rejection(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Look' },
              { type: 'image', url },
            ],
          },
        ],
      }),
    );
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });

  it('rejects images in assistant messages', () => {
    const error = rejection(
      request({
        messages: [
          hello,
          { role: 'assistant', content: [{ type: 'image', url: 'https://example.com/a.png' }], toolCalls: [] },
        ],
      }),
    );
    expect(error.param).toBe('messages.[1].content.[0]');
  });

  it('turns tool calls into tool_use and groups consecutive tool results into one user turn, results first', () => {
    const sent = body(
      request({
        tools: [weatherTool],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
          {
            role: 'assistant',
            content: [{ type: 'text', text: 'Checking both.' }],
            toolCalls: [
              { id: 'call_1', name: 'get_weather', arguments: '{"location":"Paris"}' },
              { id: 'call.2:x', name: 'get_weather', arguments: '{"location":"Rome"}' },
            ],
          },
          { role: 'tool', toolCallId: 'call_1', content: '18°C, cloudy' },
          { role: 'tool', toolCallId: 'call.2:x', content: '' },
          { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
        ],
      }),
    );
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking both.' },
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { location: 'Paris' } },
          { type: 'tool_use', id: 'call_2_x', name: 'get_weather', input: { location: 'Rome' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '18°C, cloudy' },
          { type: 'tool_result', tool_use_id: 'call_2_x' },
          { type: 'text', text: 'And tomorrow?' },
        ],
      },
    ]);
  });

  it('treats empty tool arguments as {}', () => {
    const sent = body(
      request({
        messages: [
          hello,
          { role: 'assistant', content: [], toolCalls: [{ id: 'call_1', name: 'now', arguments: '' }] },
        ],
      }),
    );
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'now', input: {} }] },
    ]);
  });

  it.each(['{"location": "Par', '["Paris"]'])('rejects tool arguments %s, naming the message', (argumentsText) => {
    const error = rejection(
      request({
        messages: [
          hello,
          {
            role: 'assistant',
            content: [],
            toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: argumentsText }],
          },
        ],
      }),
    );
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(error.param).toBe('messages.[1].tool_calls.[0].function.arguments');
  });

  // Defect (issue 8, item 10): tool arguments are JSON inside a string, parsed here and re-serialised into the
  // Anthropic body; 5,000 levels of it overflowed the stack of JSON.stringify (a 500).
  it('rejects tool arguments nested too deeply, naming the arguments, before re-serialising them', () => {
    const deep = `{"a":${'['.repeat(5_000)}${']'.repeat(5_000)}}`;
    const error = rejection(
      request({
        messages: [
          hello,
          { role: 'assistant', content: [], toolCalls: [{ id: 'call_1', name: 'f', arguments: deep }] },
        ],
      }),
    );
    expect([error.status, error.code, error.param]).toEqual([
      400,
      'json_too_deep',
      'messages.[1].tool_calls.[0].function.arguments',
    ]);
  });
});

describe('buildAnthropicChatRequest: tools', () => {
  it('sends tools as name, description and input_schema (an object schema), without strict', () => {
    const sent = body(
      request({
        tools: [
          { ...weatherTool, strict: true },
          { name: 'now', parameters: {} },
        ],
      }),
    );
    expect(sent.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather for a city',
        input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
      },
      { name: 'now', input_schema: { type: 'object' } },
    ]);
    expect(sent).not.toHaveProperty('tool_choice');
  });

  it('keeps strict when the deployment has native structured outputs', () => {
    const sent = body(request({ tools: [{ ...weatherTool, strict: true }] }), {
      options: { structuredOutputs: 'native' },
    });
    expect((sent.tools as { strict?: boolean }[])[0]?.strict).toBe(true);
  });

  it.each([
    [{ type: 'auto' }, undefined, { type: 'auto' }],
    [{ type: 'none' }, undefined, { type: 'none' }],
    [{ type: 'required' }, undefined, { type: 'any' }],
    [{ type: 'tool', name: 'get_weather' }, undefined, { type: 'tool', name: 'get_weather' }],
    [undefined, false, { type: 'auto', disable_parallel_tool_use: true }],
    [{ type: 'required' }, false, { type: 'any', disable_parallel_tool_use: true }],
    [
      { type: 'tool', name: 'get_weather' },
      false,
      { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
    ],
    [{ type: 'none' }, false, { type: 'none' }],
    [{ type: 'auto' }, true, { type: 'auto' }],
  ] as const)('maps tool_choice %o with parallel_tool_calls %s', (toolChoice, parallelToolCalls, expected) => {
    expect(body(request({ tools: [weatherTool], toolChoice, parallelToolCalls })).tool_choice).toEqual(expected);
  });

  it('sends no tool_choice when there are no tools', () => {
    expect(body(request({ toolChoice: { type: 'required' }, parallelToolCalls: false }))).not.toHaveProperty(
      'tool_choice',
    );
  });

  it('rejects a tool_choice naming an unknown tool, and the reserved JSON tool name', () => {
    expect(rejection(request({ tools: [weatherTool], toolChoice: { type: 'tool', name: 'nope' } })).param).toBe(
      'tool_choice',
    );
    expect(rejection(request({ tools: [{ name: jsonResponseToolName, parameters: {} }] })).param).toBe(
      'tools.[0].function.name',
    );
  });
});

describe('buildAnthropicChatRequest: response_format and reasoning', () => {
  const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
  const jsonSchema = { type: 'json_schema', name: 'city', schema } as const;

  it('answers json_schema through a forced JSON tool by default', () => {
    const sent = body(request({ responseFormat: jsonSchema }));
    expect(sent.tools).toEqual([
      { name: jsonResponseToolName, description: expect.stringContaining('JSON') as unknown, input_schema: schema },
    ]);
    expect(sent.tool_choice).toEqual({ type: 'tool', name: jsonResponseToolName, disable_parallel_tool_use: true });
    expect(sent).not.toHaveProperty('output_config');
  });

  it('uses the schema description and {type:"object"} for json_object', () => {
    const described = body(request({ responseFormat: { ...jsonSchema, description: 'A city.' } }));
    expect((described.tools as { description: string }[])[0]?.description).toBe('A city.');
    const object = body(request({ responseFormat: { type: 'json_object' } }));
    expect(object.tools).toEqual([
      { name: jsonResponseToolName, description: expect.any(String) as unknown, input_schema: { type: 'object' } },
    ]);
  });

  it("lets the client's own tools compete with the JSON tool unless tool_choice says otherwise", () => {
    const auto = body(request({ responseFormat: jsonSchema, tools: [weatherTool] }));
    expect((auto.tools as { name: string }[]).map((tool) => tool.name)).toEqual(['get_weather', jsonResponseToolName]);
    expect(auto.tool_choice).toEqual({ type: 'any' });
    const none = body(request({ responseFormat: jsonSchema, tools: [weatherTool], toolChoice: { type: 'none' } }));
    expect(none.tool_choice).toEqual({ type: 'tool', name: jsonResponseToolName, disable_parallel_tool_use: true });
    const forced = body(
      request({ responseFormat: jsonSchema, tools: [weatherTool], toolChoice: { type: 'tool', name: 'get_weather' } }),
    );
    expect(forced.tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
  });

  it('rejects a non-object schema and json with thinking in tool mode', () => {
    const array = rejection(
      request({ responseFormat: { type: 'json_schema', name: 'list', schema: { type: 'array' } } }),
    );
    expect(array.param).toBe('response_format.json_schema.schema');
    expect(rejection(request({ responseFormat: jsonSchema, reasoningEffort: 'low' })).param).toBe('response_format');
  });

  it('sends json_schema as output_config.format with native structured outputs', () => {
    const sent = body(request({ responseFormat: jsonSchema, reasoningEffort: 'low' }), {
      options: { structuredOutputs: 'native' },
    });
    expect(sent.output_config).toEqual({ format: { type: 'json_schema', schema } });
    expect(sent).not.toHaveProperty('tools');
    expect(sent).not.toHaveProperty('tool_choice');
  });

  it('turns reasoning_effort into a thinking budget that max_tokens leaves room for', () => {
    const defaulted = body(request({ reasoningEffort: 'medium' }));
    expect(defaulted.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
    expect(defaulted.max_tokens).toBe(4096 + 8192);
    const capped = body(request({ reasoningEffort: 'high', maxTokens: 3000 }));
    expect(capped.thinking).toEqual({ type: 'enabled', budget_tokens: 2999 });
    expect(capped.max_tokens).toBe(3000);
    expect(rejection(request({ reasoningEffort: 'low', maxTokens: 1000 })).param).toBe('max_tokens');
  });
});
