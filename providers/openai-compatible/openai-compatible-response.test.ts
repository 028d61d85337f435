import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.ts';
import {
  parseOpenAICompatibleChatResponse,
  parseOpenAICompatibleEmbeddingsResponse,
} from './openai-compatible-response.ts';
import { caught } from './openai-compatible-test-support.ts';

function completion(message: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1700000000,
    model: 'gpt-4o',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, logprobs: null, finish_reason: 'stop' }],
    ...extra,
  };
}

describe('parseOpenAICompatibleChatResponse', () => {
  it('reads id, model, created, text and system fingerprint', () => {
    const response = parseOpenAICompatibleChatResponse(
      completion({ content: 'Hi there', refusal: null }, { system_fingerprint: 'fp_1' }),
    );
    expect(response).toEqual({
      id: 'chatcmpl-1',
      model: 'gpt-4o',
      created: 1700000000,
      choices: [{ index: 0, text: 'Hi there', toolCalls: [], finishReason: { unified: 'stop', raw: 'stop' } }],
      usage: undefined,
      systemFingerprint: 'fp_1',
    });
  });

  it('tolerates a minimal compatible server body (no id, created, usage, index or fingerprint)', () => {
    const before = Math.floor(Date.now() / 1000);
    const response = parseOpenAICompatibleChatResponse({
      choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }],
    });
    expect(response.id).toBe('');
    expect(response.model).toBe('');
    expect(response.created).toBeGreaterThanOrEqual(before);
    expect(response.choices[0]).toMatchObject({ index: 0, text: 'ok' });
    expect(response.usage).toBeUndefined();
    expect(response).not.toHaveProperty('systemFingerprint');
  });

  it('reads usage with cached and reasoning tokens and keeps the raw object', () => {
    const usage = {
      prompt_tokens: 1200,
      completion_tokens: 300,
      total_tokens: 1500,
      prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 256, audio_tokens: 0 },
    };
    expect(parseOpenAICompatibleChatResponse(completion({ content: 'x' }, { usage })).usage).toEqual({
      inputTokens: 1200,
      outputTokens: 300,
      totalTokens: 1500,
      cachedInputTokens: 1024,
      reasoningTokens: 256,
      raw: usage,
    });
  });

  it("reads DeepSeek's prompt_cache_hit_tokens and computes a missing total", () => {
    const usage = {
      prompt_tokens: 50,
      completion_tokens: 10,
      prompt_cache_hit_tokens: 32,
      prompt_cache_miss_tokens: 18,
    };
    expect(parseOpenAICompatibleChatResponse(completion({ content: 'x' }, { usage })).usage).toEqual({
      inputTokens: 50,
      outputTokens: 10,
      totalTokens: 60,
      cachedInputTokens: 32,
      raw: usage,
    });
  });

  it('reads reasoning from reasoning_content (DeepSeek) or reasoning (OpenRouter)', () => {
    expect(
      parseOpenAICompatibleChatResponse(completion({ content: 'A', reasoning_content: 'because' })).choices[0]
        ?.reasoning,
    ).toBe('because');
    expect(
      parseOpenAICompatibleChatResponse(completion({ content: 'A', reasoning: 'thought' })).choices[0]?.reasoning,
    ).toBe('thought');
    expect(parseOpenAICompatibleChatResponse(completion({ content: 'A', reasoning_content: '' }))).not.toHaveProperty(
      'choices.0.reasoning',
    );
  });

  it("reads Mistral's content array with thinking parts", () => {
    const choice = parseOpenAICompatibleChatResponse(
      completion({
        content: [
          { type: 'thinking', thinking: [{ type: 'text', text: 'Let me think.' }] },
          { type: 'text', text: 'Answer: ' },
          { type: 'text', text: '42' },
        ],
      }),
    ).choices[0];
    expect(choice?.text).toBe('Answer: 42');
    expect(choice?.reasoning).toBe('Let me think.');
  });

  it('reads a refusal and passes logprobs through untouched', () => {
    const logprobs = { content: [{ token: 'No', logprob: -0.01, bytes: [78, 111], top_logprobs: [] }], refusal: null };
    const body = completion({ content: null, refusal: "I can't help with that." });
    (body.choices as Record<string, unknown>[])[0]!.logprobs = logprobs;
    const choice = parseOpenAICompatibleChatResponse(body).choices[0];
    expect(choice?.text).toBeNull();
    expect(choice?.refusal).toBe("I can't help with that.");
    expect(choice?.logprobs).toEqual(logprobs);
  });

  it('reads tool calls, serialising object arguments and inventing a missing id', () => {
    const body = completion({
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { type: 'function', function: { name: 'get_time', arguments: { zone: 'UTC' } } },
      ],
    });
    (body.choices as Record<string, unknown>[])[0]!.finish_reason = 'tool_calls';
    const choice = parseOpenAICompatibleChatResponse(body).choices[0];
    expect(choice?.toolCalls[0]).toEqual({ id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(choice?.toolCalls[1]?.name).toBe('get_time');
    expect(choice?.toolCalls[1]?.arguments).toBe('{"zone":"UTC"}');
    expect(choice?.toolCalls[1]?.id).toMatch(/^call_[0-9a-f]{32}$/);
    expect(choice?.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_calls' });
  });

  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool-calls'],
    ['function_call', 'tool-calls'],
    ['content_filter', 'content-filter'],
    ['model_length', 'length'],
    ['eos', 'stop'],
    ['error', 'error'],
    ['insufficient_system_resource', 'error'],
    ['something_new', 'other'],
  ])('maps finish_reason %s to %s, keeping the raw value', (raw, unified) => {
    const body = completion({ content: 'x' });
    (body.choices as Record<string, unknown>[])[0]!.finish_reason = raw;
    expect(parseOpenAICompatibleChatResponse(body).choices[0]?.finishReason).toEqual({ unified, raw });
  });

  it('maps a null finish_reason to other and a stop with tool calls to tool-calls', () => {
    const open = completion({ content: 'x' });
    (open.choices as Record<string, unknown>[])[0]!.finish_reason = null;
    expect(parseOpenAICompatibleChatResponse(open).choices[0]?.finishReason).toEqual({
      unified: 'other',
      raw: undefined,
    });
    const ollama = completion({ content: '', tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{}' } }] });
    expect(parseOpenAICompatibleChatResponse(ollama).choices[0]?.finishReason).toEqual({
      unified: 'tool-calls',
      raw: 'stop',
    });
  });

  it('reads several choices by index', () => {
    const response = parseOpenAICompatibleChatResponse({
      id: 'c',
      created: 1,
      model: 'm',
      choices: [
        { index: 0, message: { content: 'one' }, finish_reason: 'stop' },
        { index: 1, message: { content: 'two' }, finish_reason: 'length' },
      ],
    });
    expect(response.choices.map((choice) => [choice.index, choice.text, choice.finishReason.unified])).toEqual([
      [0, 'one', 'stop'],
      [1, 'two', 'length'],
    ]);
  });

  it('throws the mapped error for an error object in a 200 body', () => {
    const error = caught(() =>
      parseOpenAICompatibleChatResponse({
        error: { message: 'Context too long', type: 'BadRequestError', param: null, code: 400 },
      }),
    );
    expect(isGatewayError(error)).toBe(true);
    expect(error).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      message: 'Context too long',
      code: '400',
    });
  });

  it('throws a retryable 502 for a body of another shape', () => {
    const error = caught(() => parseOpenAICompatibleChatResponse({ choices: [{ message: { content: 5 } }] }));
    expect(isGatewayError(error)).toBe(true);
    expect(error).toMatchObject({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_invalid_response',
      retryable: true,
      provider: 'openai-compatible',
    });
    expect((error as Error).message).toContain('choices.0.message.content');
    expect(isGatewayError(caught(() => parseOpenAICompatibleChatResponse('not json')))).toBe(true);
  });
});

describe('parseOpenAICompatibleEmbeddingsResponse', () => {
  it('reads vectors, model and usage (no output tokens)', () => {
    const usage = { prompt_tokens: 5, total_tokens: 5 };
    expect(
      parseOpenAICompatibleEmbeddingsResponse({
        object: 'list',
        data: [
          { object: 'embedding', index: 0, embedding: [0.1, -0.2] },
          { object: 'embedding', index: 1, embedding: [0.3, 0.4] },
        ],
        model: 'text-embedding-3-small',
        usage,
      }),
    ).toEqual({
      model: 'text-embedding-3-small',
      data: [
        { index: 0, embedding: [0.1, -0.2] },
        { index: 1, embedding: [0.3, 0.4] },
      ],
      usage: { inputTokens: 5, outputTokens: 0, totalTokens: 5, raw: usage },
    });
  });

  it('reads base64 embeddings and tolerates missing index, model and usage', () => {
    expect(parseOpenAICompatibleEmbeddingsResponse({ data: [{ embedding: 'AAAAPw==' }] })).toEqual({
      model: '',
      data: [{ index: 0, embedding: 'AAAAPw==' }],
      usage: undefined,
    });
  });

  it('throws a 502 for a body without data', () => {
    expect(caught(() => parseOpenAICompatibleEmbeddingsResponse({ model: 'm' }))).toMatchObject({
      status: 502,
      code: 'upstream_invalid_response',
    });
  });
});
