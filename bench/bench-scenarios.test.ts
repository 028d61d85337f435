import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAnthropicAnswer } from '../src/dialects/anthropic-messages/anthropic-messages-answer-check.ts';
import { validateAnthropicMessagesRequest } from '../src/dialects/anthropic-messages/anthropic-messages-request-schema.ts';
import { startMockUpstream } from './bench-mock-upstream.ts';
import { scenarioNames, scenarioRequestBody, scenarios } from './bench-scenarios.ts';

describe('scenarios', () => {
  it('has a ~1 KB body, a path and a model group for every scenario', () => {
    expect(scenarioNames).toEqual(['chat', 'chat-stream', 'messages']);
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
  });

  it('sends a valid, non-streamed Anthropic Messages request for messages', () => {
    const body = JSON.parse(scenarioRequestBody('messages')) as Record<string, unknown>;
    const request = validateAnthropicMessagesRequest(body);
    expect(request.max_tokens).toBe(256);
    expect(body.stream).toBeUndefined();
    expect(body.metadata).toEqual({ user_id: 'bench-user-0001' });
    expect((body.messages as { role: string }[]).map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
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
