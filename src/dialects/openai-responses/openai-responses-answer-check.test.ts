import { describe, expect, it } from 'vitest';
import { checkOpenAIResponsesAnswer, responseIdOf } from './openai-responses-answer-check.ts';

const usage = {
  input_tokens: 328,
  input_tokens_details: { cached_tokens: 256 },
  output_tokens: 52,
  output_tokens_details: { reasoning_tokens: 32 },
  total_tokens: 380,
};

/** A Response object as OpenAI returns it for a non-streamed request. */
const response = {
  id: 'resp_0888a46cbf2b1ff3006914596e05d08195a77c3f5187b769a7',
  object: 'response',
  created_at: 1762941294,
  status: 'completed',
  error: null,
  incomplete_details: null,
  model: 'gpt-5-2025-08-07',
  output: [
    { id: 'rs_0888', type: 'reasoning', summary: [] },
    {
      id: 'msg_0888',
      type: 'message',
      status: 'completed',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Hello! How can I help?' }],
      role: 'assistant',
    },
  ],
  parallel_tool_calls: true,
  store: true,
  usage,
  metadata: {},
};

describe('checkOpenAIResponsesAnswer', () => {
  it('accepts a response and reads its usage', () => {
    expect(checkOpenAIResponsesAnswer(JSON.stringify(response))).toEqual({
      ok: true,
      usage: {
        inputTokens: 328,
        outputTokens: 52,
        totalTokens: 380,
        cachedInputTokens: 256,
        reasoningTokens: 32,
        raw: usage,
      },
    });
  });

  it('accepts incomplete and background (queued) responses, usage undefined when absent', () => {
    const incomplete = { ...response, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
    expect(checkOpenAIResponsesAnswer(JSON.stringify(incomplete)).ok).toBe(true);
    const { usage: _usage, ...queued } = { ...response, status: 'queued', output: [] };
    expect(checkOpenAIResponsesAnswer(JSON.stringify(queued))).toEqual({ ok: true, usage: undefined });
  });

  it("rejects a failed response, keeping its error's message", () => {
    const failed = {
      ...response,
      status: 'failed',
      error: { code: 'server_error', message: 'The model failed to generate a response.' },
    };
    expect(checkOpenAIResponsesAnswer(JSON.stringify(failed))).toEqual({
      ok: false,
      reason: 'the response failed',
      errorMessage: 'The model failed to generate a response.',
    });
  });

  it("rejects an error object, keeping the upstream's message", () => {
    const error = {
      error: {
        message: "Previous response with id 'resp_abc' not found.",
        type: 'invalid_request_error',
        param: 'previous_response_id',
        code: 'previous_response_not_found',
      },
    };
    expect(checkOpenAIResponsesAnswer(JSON.stringify(error))).toEqual({
      ok: false,
      reason: 'the body is an error object',
      errorMessage: "Previous response with id 'resp_abc' not found.",
    });
    expect(checkOpenAIResponsesAnswer('{"object":"error","message":"model not found"}')).toEqual({
      ok: false,
      reason: 'the body is an error object',
      errorMessage: 'model not found',
    });
  });

  it('rejects what is not a response', () => {
    const completion = { id: 'chatcmpl-1', object: 'chat.completion', choices: [] };
    expect(checkOpenAIResponsesAnswer(JSON.stringify(completion))).toEqual({
      ok: false,
      reason: 'the body is not a Responses response (object "chat.completion")',
    });
    expect(checkOpenAIResponsesAnswer('{}')).toEqual({
      ok: false,
      reason: 'the body is not a Responses response (object missing)',
    });
    expect(checkOpenAIResponsesAnswer('')).toEqual({ ok: false, reason: 'the body is empty' });
    expect(checkOpenAIResponsesAnswer('<html>Bad gateway</html>')).toEqual({
      ok: false,
      reason: 'the body is not a JSON object',
    });
    expect(checkOpenAIResponsesAnswer('[1]')).toEqual({ ok: false, reason: 'the body is not a JSON object' });
    expect(checkOpenAIResponsesAnswer(JSON.stringify(response).slice(0, 80))).toEqual({
      ok: false,
      reason: 'the JSON is cut off',
    });
    expect(checkOpenAIResponsesAnswer('{"object": "response",}')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^the JSON is malformed/) as unknown,
    });
  });
});

describe('responseIdOf', () => {
  it("reads the answer's top-level id", () => {
    expect(responseIdOf(JSON.stringify(response))).toBe('resp_0888a46cbf2b1ff3006914596e05d08195a77c3f5187b769a7');
  });

  it('is undefined for what has no string id', () => {
    expect(responseIdOf('{"error":{"message":"x"}}')).toBeUndefined();
    expect(responseIdOf('{"id":42}')).toBeUndefined();
    expect(responseIdOf('not json')).toBeUndefined();
    expect(responseIdOf('["resp_1"]')).toBeUndefined();
  });
});
