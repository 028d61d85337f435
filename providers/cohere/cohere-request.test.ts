import { describe, expect, it } from 'vitest';
import type { CanonicalChatRequest, UpstreamTarget } from '../../src/canonical/index.ts';
import { isGatewayError } from '../../src/errors.ts';
import { buildCohereChatRequest, buildCohereHealthCheckRequest } from './cohere-request.ts';
import { validateCohereOptions } from './cohere-options.ts';

const target: UpstreamTarget = {
  providerName: 'cohere',
  baseURL: 'https://api.cohere.com',
  model: 'command-a-03-2025',
  apiKey: 'co-key',
  headers: {},
  options: {},
};

const userHello = { role: 'user' as const, content: [{ type: 'text' as const, text: 'Hello' }] };
const weatherTool = { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: {} } };
const timeTool = { name: 'get_time', parameters: { type: 'object', properties: {} } };

function request(overrides: Partial<CanonicalChatRequest> = {}): CanonicalChatRequest {
  return { model: 'group', messages: [userHello], stream: false, streamIncludeUsage: false, ...overrides };
}

function body(overrides: Partial<CanonicalChatRequest> = {}, deployment: UpstreamTarget = target) {
  return JSON.parse(buildCohereChatRequest(request(overrides), deployment).body ?? '') as Record<string, unknown>;
}

function thrown(action: () => unknown) {
  try {
    action();
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

describe('buildCohereChatRequest', () => {
  it('posts to /v2/chat with a bearer key, JSON in and out', () => {
    const upstream = buildCohereChatRequest(request(), { ...target, headers: { 'X-Client-Name': 'torii' } });
    expect(upstream.url).toBe('https://api.cohere.com/v2/chat');
    expect(upstream.method).toBe('POST');
    expect(upstream.headers).toEqual({
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: 'Bearer co-key',
      'x-client-name': 'torii',
    });
    expect(JSON.parse(upstream.body ?? '')).toEqual({
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'Hello' }],
    });
  });

  it('sends documents to ground the answer in, with their ids', () => {
    const documents = [
      { id: 'doc-1', data: { title: 'Penguins', snippet: 'Emperors are tallest.' } },
      { data: { text: 'x' } },
    ];
    expect(body({ documents })).toMatchObject({ documents });
    expect(body()).not.toHaveProperty('documents');
  });

  it('asks for an event stream when streaming', () => {
    const upstream = buildCohereChatRequest(request({ stream: true }), target);
    expect(upstream.headers.accept).toBe('text/event-stream');
    expect(JSON.parse(upstream.body ?? '')).toMatchObject({ stream: true });
  });

  it('joins system messages into one leading system message', () => {
    const messages = body({
      messages: [{ role: 'system', content: 'Be brief.' }, userHello, { role: 'system', content: 'Answer in French.' }],
    }).messages;
    expect(messages).toEqual([
      { role: 'system', content: 'Be brief.\n\nAnswer in French.' },
      { role: 'user', content: 'Hello' },
    ]);
  });

  it('sends images as image_url blocks with their detail', () => {
    const messages = body({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Describe this image' },
            { type: 'image', url: 'https://cohere.com/favicon-32x32.png', detail: 'low' },
            { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=' },
          ],
        },
      ],
    }).messages;
    expect(messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe this image' },
          { type: 'image_url', image_url: { url: 'https://cohere.com/favicon-32x32.png', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
    ]);
  });

  it('sends assistant text beside tool calls as the tool plan, and tool results by call id', () => {
    const messages = body({
      messages: [
        userHello,
        {
          role: 'assistant',
          content: [{ type: 'text', text: 'I will look up the weather.' }],
          toolCalls: [
            { id: 'get_weather_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
            { id: 'get_time_2', name: 'get_time', arguments: '' },
          ],
        },
        { role: 'tool', toolCallId: 'get_weather_1', content: '{"temperature":21}' },
        { role: 'tool', toolCallId: 'get_time_2', content: '12:00' },
        { role: 'assistant', content: [{ type: 'text', text: 'It is 21 degrees.' }], toolCalls: [] },
        { role: 'assistant', content: [], toolCalls: [] },
      ],
    }).messages;
    expect(messages).toEqual([
      { role: 'user', content: 'Hello' },
      {
        role: 'assistant',
        tool_plan: 'I will look up the weather.',
        tool_calls: [
          { id: 'get_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'get_time_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'get_weather_1', content: '{"temperature":21}' },
      { role: 'tool', tool_call_id: 'get_time_2', content: '12:00' },
      { role: 'assistant', content: 'It is 21 degrees.' },
    ]);
  });

  it('refuses images in assistant messages, naming the part', () => {
    const error = thrown(() =>
      buildCohereChatRequest(
        request({
          messages: [
            userHello,
            { role: 'assistant', content: [{ type: 'image', url: 'https://x.test/a.png' }], toolCalls: [] },
          ],
        }),
        target,
      ),
    );
    expect(error).toMatchObject({ status: 400, param: 'messages.[1].content.[0]' });
  });

  it('maps tools, and strict_tools only when every tool is strict', () => {
    expect(body({ tools: [weatherTool, timeTool] })).toMatchObject({
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather', parameters: weatherTool.parameters },
        },
        { type: 'function', function: { name: 'get_time', parameters: timeTool.parameters } },
      ],
    });
    expect(body({ tools: [{ ...weatherTool, strict: true }, timeTool] }).strict_tools).toBeUndefined();
    expect(body({ tools: [{ ...weatherTool, strict: true }] }).strict_tools).toBe(true);
  });

  it('maps tool_choice to REQUIRED and NONE, and auto to nothing', () => {
    expect(body({ tools: [weatherTool], toolChoice: { type: 'auto' } }).tool_choice).toBeUndefined();
    expect(body({ tools: [weatherTool], toolChoice: { type: 'required' } }).tool_choice).toBe('REQUIRED');
    expect(body({ tools: [weatherTool], toolChoice: { type: 'none' } }).tool_choice).toBe('NONE');
    expect(body({ toolChoice: { type: 'none' } })).not.toHaveProperty('tool_choice');
  });

  it('narrows the tools to a named function and requires it', () => {
    const sent = body({ tools: [weatherTool, timeTool], toolChoice: { type: 'tool', name: 'get_time' } });
    expect(sent.tools).toEqual([{ type: 'function', function: { name: 'get_time', parameters: timeTool.parameters } }]);
    expect(sent.tool_choice).toBe('REQUIRED');
  });

  it('refuses a named function that is not in tools, and required without tools, naming tool_choice', () => {
    expect(thrown(() => body({ tools: [weatherTool], toolChoice: { type: 'tool', name: 'other' } }))).toMatchObject({
      status: 400,
      param: 'tool_choice',
    });
    expect(thrown(() => body({ toolChoice: { type: 'required' } }))).toMatchObject({
      status: 400,
      param: 'tool_choice',
    });
  });

  it('maps response formats to json_object, with the schema when there is one', () => {
    expect(body({ responseFormat: { type: 'text' } })).not.toHaveProperty('response_format');
    expect(body({ responseFormat: { type: 'json_object' } }).response_format).toEqual({ type: 'json_object' });
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    expect(
      body({ responseFormat: { type: 'json_schema', name: 'person', schema, strict: true } }).response_format,
    ).toEqual({
      type: 'json_object',
      json_schema: schema,
    });
  });

  it('maps sampling parameters to Cohere names and ranges', () => {
    expect(body({ maxTokens: 300, temperature: 0.2, topP: 1, topK: 40, seed: 7, stop: ['END'], user: 'u-1' })).toEqual({
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'Hello' }],
      max_tokens: 300,
      temperature: 0.2,
      p: 0.99,
      k: 40,
      seed: 7,
      stop_sequences: ['END'],
    });
    expect(body({ topP: 0 }).p).toBe(0.01);
    expect(body({ topP: 0.5 }).p).toBe(0.5);
  });

  it('leaves zero penalties out and clamps the others to 0-1', () => {
    const zero = body({ frequencyPenalty: 0, presencePenalty: 0 });
    expect(zero).not.toHaveProperty('frequency_penalty');
    expect(zero).not.toHaveProperty('presence_penalty');
    expect(body({ frequencyPenalty: 1.5, presencePenalty: -1 })).toMatchObject({ frequency_penalty: 1 });
    expect(body({ presencePenalty: 0.4 }).presence_penalty).toBe(0.4);
  });

  it('maps reasoning effort to thinking', () => {
    expect(body({ reasoningEffort: 'none' }).thinking).toEqual({ type: 'disabled' });
    expect(body({ reasoningEffort: 'low' }).thinking).toEqual({ type: 'enabled', token_budget: 2048 });
    expect(body({ reasoningEffort: 'high' }).thinking).toEqual({ type: 'enabled' });
    expect(body({ reasoningEffort: 'medium', reasoningBudgetTokens: 3000 }).thinking).toEqual({
      type: 'enabled',
      token_budget: 3000,
    });
    expect(body()).not.toHaveProperty('thinking');
  });

  it('sends the deployment safety mode', () => {
    expect(body({}, { ...target, options: { safetyMode: 'STRICT' } }).safety_mode).toBe('STRICT');
  });

  it('answers invalid deployment options with a 500', () => {
    expect(thrown(() => body({}, { ...target, options: { safetyMode: 'LOUD' } }))).toMatchObject({
      status: 500,
      code: 'invalid_provider_options',
    });
  });
});

describe('validateCohereOptions', () => {
  it('accepts the known options and names bad ones', () => {
    expect(
      validateCohereOptions({ embeddingInputType: 'search_query', embeddingTruncate: 'START', safetyMode: 'OFF' }),
    ).toEqual([]);
    const problems = validateCohereOptions({ embeddingInputType: 'query', embeddingTruncate: 3 });
    expect(problems.map((problem) => problem.split(':')[0])).toEqual(['embeddingInputType', 'embeddingTruncate']);
  });
});

describe('buildCohereHealthCheckRequest', () => {
  it('lists one model with the key', () => {
    expect(buildCohereHealthCheckRequest(target)).toEqual({
      url: 'https://api.cohere.com/v1/models?page_size=1',
      method: 'GET',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: 'Bearer co-key' },
      body: undefined,
    });
  });
});
