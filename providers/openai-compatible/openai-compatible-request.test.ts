import { describe, expect, it } from 'vitest';
import type { CanonicalChatRequest, UpstreamTarget } from '../../src/canonical/index.ts';
import { isGatewayError } from '../../src/errors.ts';
import { parseJson } from '../../src/framing/index.ts';
import {
  buildOpenAICompatibleChatRequest,
  buildOpenAICompatibleEmbeddingsRequest,
} from './openai-compatible-request.ts';
import { caught } from './openai-compatible-test-support.ts';

const target: UpstreamTarget = {
  providerName: 'openai',
  baseURL: 'https://api.openai.com/v1',
  model: 'gpt-4o-mini',
  apiKey: 'sk-test',
  headers: {},
  options: {},
};

function chatRequest(overrides: Partial<CanonicalChatRequest> = {}): CanonicalChatRequest {
  return {
    model: 'fast',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    stream: false,
    streamIncludeUsage: false,
    ...overrides,
  };
}

function bodyOf(request: { body: string | undefined }): Record<string, unknown> {
  const parsed = parseJson(request.body ?? '');
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value as Record<string, unknown>;
}

describe('buildOpenAICompatibleChatRequest', () => {
  it('posts to {baseURL}/chat/completions with the bearer key and JSON', () => {
    const request = buildOpenAICompatibleChatRequest(chatRequest(), target);
    expect(request.url).toBe('https://api.openai.com/v1/chat/completions');
    expect(request.method).toBe('POST');
    expect(request.headers).toEqual({ 'content-type': 'application/json', authorization: 'Bearer sk-test' });
  });

  it('sends the minimal body: upstream model, a plain-string user message, nothing else', () => {
    expect(buildOpenAICompatibleChatRequest(chatRequest(), target).body).toBe(
      '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}',
    );
  });

  it('omits authorization without a key and lets config headers win', () => {
    const keyless = buildOpenAICompatibleChatRequest(chatRequest(), {
      ...target,
      apiKey: undefined,
      headers: { 'x-title': 'torii' },
    });
    expect(keyless.headers).toEqual({ 'content-type': 'application/json', 'x-title': 'torii' });
    const azure = buildOpenAICompatibleChatRequest(chatRequest(), {
      ...target,
      headers: { authorization: 'Bearer other', 'api-key': 'k' },
    });
    expect(azure.headers.authorization).toBe('Bearer other');
    expect(azure.headers['api-key']).toBe('k');
  });

  it('tolerates a trailing slash on the base URL', () => {
    expect(
      buildOpenAICompatibleChatRequest(chatRequest(), { ...target, baseURL: 'http://localhost:11434/v1/' }).url,
    ).toBe('http://localhost:11434/v1/chat/completions');
  });

  it('maps every canonical sampling and control field to its wire name', () => {
    const body = bodyOf(
      buildOpenAICompatibleChatRequest(
        chatRequest({
          maxTokens: 256,
          temperature: 0.2,
          topP: 0.9,
          stop: ['END', '###'],
          seed: 7,
          user: 'user-42',
          n: 2,
          presencePenalty: 0.5,
          frequencyPenalty: -0.5,
          logprobs: true,
          topLogprobs: 3,
          reasoningEffort: 'low',
        }),
        target,
      ),
    );
    expect(body).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 256,
      temperature: 0.2,
      top_p: 0.9,
      stop: ['END', '###'],
      seed: 7,
      user: 'user-42',
      n: 2,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      logprobs: true,
      top_logprobs: 3,
      reasoning_effort: 'low',
    });
  });

  it('keeps zero values and omits an empty stop list', () => {
    const body = bodyOf(
      buildOpenAICompatibleChatRequest(chatRequest({ temperature: 0, maxTokens: 0, stop: [] }), target),
    );
    expect(body.temperature).toBe(0);
    expect(body.max_tokens).toBe(0);
    expect(body).not.toHaveProperty('stop');
  });

  it('sends max_completion_tokens when the deployment asks for it', () => {
    const body = bodyOf(
      buildOpenAICompatibleChatRequest(chatRequest({ maxTokens: 100 }), {
        ...target,
        options: { maxTokensField: 'max_completion_tokens' },
      }),
    );
    expect(body.max_completion_tokens).toBe(100);
    expect(body).not.toHaveProperty('max_tokens');
  });

  it('drops topK unless the deployment opts in with sendTopK', () => {
    expect(bodyOf(buildOpenAICompatibleChatRequest(chatRequest({ topK: 40 }), target))).not.toHaveProperty('top_k');
    expect(
      bodyOf(buildOpenAICompatibleChatRequest(chatRequest({ topK: 40 }), { ...target, options: { sendTopK: true } }))
        .top_k,
    ).toBe(40);
  });

  it('rejects invalid deployment options as a 500 configuration error', () => {
    const error = caught(() =>
      buildOpenAICompatibleChatRequest(chatRequest(), { ...target, options: { maxTokensField: 'max_token' } }),
    );
    expect(isGatewayError(error)).toBe(true);
    expect(error).toMatchObject({ status: 500, code: 'invalid_provider_options' });
  });

  it('always asks a stream for usage, even when the client did not', () => {
    const body = bodyOf(
      buildOpenAICompatibleChatRequest(chatRequest({ stream: true, streamIncludeUsage: false }), target),
    );
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
    const nonStream = bodyOf(buildOpenAICompatibleChatRequest(chatRequest(), target));
    expect(nonStream).not.toHaveProperty('stream');
    expect(nonStream).not.toHaveProperty('stream_options');
  });

  it('maps every message role and content part', () => {
    const body = bodyOf(
      buildOpenAICompatibleChatRequest(
        chatRequest({
          messages: [
            { role: 'system', content: 'Be brief.' },
            {
              role: 'user',
              name: 'ana',
              content: [
                { type: 'text', text: 'What is in this image?' },
                { type: 'image', url: 'https://example.com/cat.png', detail: 'low' },
                { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=' },
              ],
            },
            { role: 'assistant', content: [], toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"cat"}' }] },
            { role: 'tool', toolCallId: 'call_1', content: '{"answer":"a cat"}' },
            {
              role: 'assistant',
              content: [
                { type: 'text', text: 'A ' },
                { type: 'text', text: 'cat.' },
              ],
              toolCalls: [],
              name: 'bot',
            },
            { role: 'user', content: [] },
          ],
        }),
        target,
      ),
    );
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        name: 'ana',
        content: [
          { type: 'text', text: 'What is in this image?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"cat"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"answer":"a cat"}' },
      { role: 'assistant', content: 'A cat.', name: 'bot' },
      { role: 'user', content: '' },
    ]);
  });

  it('keeps assistant text beside tool calls', () => {
    const body = bodyOf(
      buildOpenAICompatibleChatRequest(
        chatRequest({
          messages: [
            {
              role: 'assistant',
              content: [{ type: 'text', text: 'Checking.' }],
              toolCalls: [{ id: 'c', name: 'f', arguments: '{}' }],
            },
          ],
        }),
        target,
      ),
    );
    expect(body.messages).toEqual([
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
    ]);
  });

  it('rejects an image in an assistant message with a 400 naming the message', () => {
    const error = caught(() =>
      buildOpenAICompatibleChatRequest(
        chatRequest({
          messages: [
            { role: 'assistant', content: [{ type: 'image', url: 'https://example.com/a.png' }], toolCalls: [] },
          ],
        }),
        target,
      ),
    );
    expect(isGatewayError(error)).toBe(true);
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'messages.[0].content' });
  });

  it('maps tools, every tool choice and parallel tool calls', () => {
    const tools = [
      {
        name: 'get_weather',
        description: 'Weather for a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
        strict: true,
      },
      { name: 'noop', parameters: { type: 'object' } },
    ];
    const body = bodyOf(
      buildOpenAICompatibleChatRequest(
        chatRequest({ tools, toolChoice: { type: 'tool', name: 'get_weather' }, parallelToolCalls: false }),
        target,
      ),
    );
    expect(body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
          strict: true,
        },
      },
      { type: 'function', function: { name: 'noop', parameters: { type: 'object' } } },
    ]);
    expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(body.parallel_tool_calls).toBe(false);
    for (const type of ['auto', 'none', 'required'] as const) {
      expect(
        bodyOf(buildOpenAICompatibleChatRequest(chatRequest({ tools, toolChoice: { type } }), target)).tool_choice,
      ).toBe(type);
    }
  });

  it('omits tool_choice and parallel_tool_calls without tools (OpenAI rejects them)', () => {
    const body = bodyOf(
      buildOpenAICompatibleChatRequest(
        chatRequest({ tools: [], toolChoice: { type: 'none' }, parallelToolCalls: true }),
        target,
      ),
    );
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('tool_choice');
    expect(body).not.toHaveProperty('parallel_tool_calls');
  });

  it('maps every response format', () => {
    const format = (responseFormat: CanonicalChatRequest['responseFormat']) =>
      bodyOf(buildOpenAICompatibleChatRequest(chatRequest({ responseFormat }), target)).response_format;
    expect(format({ type: 'text' })).toEqual({ type: 'text' });
    expect(format({ type: 'json_object' })).toEqual({ type: 'json_object' });
    expect(
      format({
        type: 'json_schema',
        name: 'person',
        schema: { type: 'object' },
        strict: true,
        description: 'A person',
      }),
    ).toEqual({
      type: 'json_schema',
      json_schema: { name: 'person', description: 'A person', schema: { type: 'object' }, strict: true },
    });
    expect(format({ type: 'json_schema', name: 'person', schema: { type: 'object' } })).toEqual({
      type: 'json_schema',
      json_schema: { name: 'person', schema: { type: 'object' } },
    });
  });
});

describe('buildOpenAICompatibleEmbeddingsRequest', () => {
  it('posts to {baseURL}/embeddings with the upstream model and every option', () => {
    const request = buildOpenAICompatibleEmbeddingsRequest(
      { model: 'embed', input: ['hello', 'world'], encodingFormat: 'base64', dimensions: 256, user: 'u' },
      { ...target, model: 'text-embedding-3-small' },
    );
    expect(request.url).toBe('https://api.openai.com/v1/embeddings');
    expect(request.method).toBe('POST');
    expect(request.headers.authorization).toBe('Bearer sk-test');
    expect(bodyOf(request)).toEqual({
      model: 'text-embedding-3-small',
      input: ['hello', 'world'],
      encoding_format: 'base64',
      dimensions: 256,
      user: 'u',
    });
  });

  it('passes token arrays through and omits absent options', () => {
    const request = buildOpenAICompatibleEmbeddingsRequest({ model: 'embed', input: [[1, 2, 3]] }, target);
    expect(request.body).toBe('{"model":"gpt-4o-mini","input":[[1,2,3]]}');
  });
});
