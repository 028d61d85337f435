import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAnthropicAnswer } from '../src/dialects/anthropic-messages/anthropic-messages-answer-check.ts';
import { validateAnthropicMessagesRequest } from '../src/dialects/anthropic-messages/anthropic-messages-request-schema.ts';
import { checkOpenAIResponsesAnswer } from '../src/dialects/openai-responses/openai-responses-answer-check.ts';
import { validateOpenAIResponsesRequest } from '../src/dialects/openai-responses/openai-responses-request-schema.ts';
import { startMockUpstream } from './bench-mock-upstream.ts';
import { scenarioNames, scenarioRequestBody, scenarios } from './bench-scenarios.ts';

describe('scenarios', () => {
  it('has a ~1 KB body, a path and a model group for every scenario', () => {
    expect(scenarioNames).toEqual(['chat', 'chat-stream', 'chat-ten', 'messages', 'responses']);
    for (const scenario of scenarioNames) {
      const body = scenarioRequestBody(scenario);
      expect(body.length).toBeGreaterThan(800);
      expect(body.length).toBeLessThan(1_200);
      expect((JSON.parse(body) as { model: string }).model).toBe(scenarios[scenario].model);
    }
    expect(scenarios.chat.path).toBe('/v1/chat/completions');
    expect(scenarios['chat-stream'].path).toBe('/v1/chat/completions');
    expect(scenarios.messages.path).toBe('/v1/messages');
    expect(scenarios.messages.model).not.toBe(scenarios.chat.model);
    expect(scenarios.responses.path).toBe('/v1/responses');
    expect(new Set(scenarioNames.map((scenario) => scenarios[scenario].model)).size).toBe(4);
  });

  it('sends a valid, non-streamed Anthropic Messages request for messages', () => {
    const body = JSON.parse(scenarioRequestBody('messages')) as Record<string, unknown>;
    const request = validateAnthropicMessagesRequest(body);
    expect(request.max_tokens).toBe(256);
    expect(body.stream).toBeUndefined();
    expect(body.metadata).toEqual({ user_id: 'bench-user-0001' });
    expect((body.messages as { role: string }[]).map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
  });

  it('sends a valid, non-streamed, unstored OpenAI Responses request for responses', () => {
    const body = JSON.parse(scenarioRequestBody('responses')) as Record<string, unknown>;
    const messages = JSON.parse(scenarioRequestBody('messages')) as { system: string; messages: { role: string }[] };
    const request = validateOpenAIResponsesRequest(body);
    expect(request).toMatchObject({ max_output_tokens: 256, temperature: 0.2, store: false });
    expect(body.stream).toBeUndefined();
    expect(request.instructions).toBe(messages.system);
    const input = body.input as { type: string; role: string; content: { type: string; text: string }[] }[];
    expect(input.map((item) => item.type)).toEqual(['message', 'message', 'message']);
    expect(input.map((item) => item.role)).toEqual(messages.messages.map((message) => message.role));
    expect(input.map((item) => item.content.map((part) => part.type))).toEqual([
      ['input_text'],
      ['output_text'],
      ['input_text'],
    ]);
  });
});

describe('the mock upstream', () => {
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    server = await startMockUpstream({ port: 0 });
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers /v1/messages with an Anthropic message echoing the model, which the gateway accepts', async () => {
    const response = await fetch(`${origin}${scenarios.messages.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: scenarioRequestBody('messages'),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    const answer = JSON.parse(text) as Record<string, unknown>;
    expect(answer).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: scenarios.messages.model,
      stop_reason: 'end_turn',
      stop_sequence: null,
    });
    expect(answer.id).toMatch(/^msg_/);
    const check = checkAnthropicAnswer(text);
    expect(check.ok).toBe(true);
    expect(check.ok && check.usage).toMatchObject({ inputTokens: 212, outputTokens: 96, cachedInputTokens: 128 });
  });

  async function answerText(scenario: 'chat' | 'responses', body = scenarioRequestBody(scenario)): Promise<string> {
    const response = await fetch(`${origin}${scenarios[scenario].path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    return response.text();
  }

  it('answers /v1/responses with a completed Response echoing the request, which the gateway accepts', async () => {
    const text = await answerText('responses');
    const answer = JSON.parse(text) as Record<string, unknown>;
    const request = JSON.parse(scenarioRequestBody('responses')) as Record<string, unknown>;
    expect(answer).toMatchObject({
      object: 'response',
      status: 'completed',
      error: null,
      incomplete_details: null,
      model: scenarios.responses.model,
      instructions: request.instructions,
      max_output_tokens: request.max_output_tokens,
      temperature: request.temperature,
      store: false,
      previous_response_id: null,
      usage: {
        input_tokens: 212,
        input_tokens_details: { cached_tokens: 128 },
        output_tokens: 96,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 308,
      },
    });
    expect(answer.id).toMatch(/^resp_/);
    expect(typeof answer.created_at).toBe('number');
    const output = answer.output as Record<string, unknown>[];
    expect(output).toHaveLength(1);
    expect(output[0]).toMatchObject({ type: 'message', status: 'completed', role: 'assistant' });
    expect(output[0]!.id).toMatch(/^msg_/);
    // The same text as the chat answer.
    const chat = JSON.parse(await answerText('chat')) as { choices: { message: { content: string } }[] };
    expect(output[0]!.content).toEqual([
      { type: 'output_text', annotations: [], logprobs: [], text: chat.choices[0]!.message.content },
    ]);
    const check = checkOpenAIResponsesAnswer(text);
    expect(check.ok).toBe(true);
    expect(check.ok && check.usage).toMatchObject({
      inputTokens: 212,
      outputTokens: 96,
      totalTokens: 308,
      cachedInputTokens: 128,
      reasoningTokens: 0,
    });
  });

  it('answers /v1/responses precomputed per model: the same bytes again, another model echoed', async () => {
    const first = await answerText('responses');
    expect(await answerText('responses')).toBe(first);
    const otherModel = JSON.stringify({ ...JSON.parse(scenarioRequestBody('responses')), model: 'gpt-5-mini' });
    const other = JSON.parse(await answerText('responses', otherModel)) as { model: string };
    expect(other.model).toBe('gpt-5-mini');
  });

  it('still answers /v1/chat/completions with a chat completion', async () => {
    const response = await fetch(`${origin}${scenarios.chat.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: scenarioRequestBody('chat'),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ object: 'chat.completion', model: scenarios.chat.model });
  });
});
