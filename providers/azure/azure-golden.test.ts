import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseJson } from '../../src/framing/index.ts';
import { reduceProviderStream, testProvider } from '../../tests/conformance/provider-suite.ts';
import { azureOpenAITranslator } from './azure-translator.ts';

/*
 * Golden tests: every recorded Azure OpenAI fixture through the provider seam's conformance suite
 * (tests/conformance/provider-suite.ts), snapshots in __snapshots__/suite/, then the values particular to Azure:
 * the prompt-filter chunk a stream opens with, the content filter's finish reason, and its error shapes.
 */

const translator = azureOpenAITranslator;

function fixture(name: string): Promise<string> {
  return readFile(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');
}

async function jsonFixture(name: string): Promise<unknown> {
  const parsed = parseJson(await fixture(name));
  if (!parsed.ok) throw new Error(`${name}: ${parsed.error}`);
  return parsed.value;
}

const runStream = (body: string) => reduceProviderStream(translator, new TextEncoder().encode(body));

testProvider({
  translator,
  fixtures: new URL('./__fixtures__/', import.meta.url),
  snapshots: new URL('./__snapshots__/suite/', import.meta.url),
  chat: ['text', 'tools', 'content-filter'],
  embeddings: ['embeddings'],
  errors: [
    {
      fixture: 'error-400',
      upstreamStatus: 400,
      status: 400,
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
      retryable: false,
    },
    {
      fixture: 'error-400-content-filter',
      upstreamStatus: 400,
      status: 400,
      type: 'invalid_request_error',
      code: 'content_filter',
      retryable: false,
    },
    {
      fixture: 'error-401',
      upstreamStatus: 401,
      status: 502,
      type: 'upstream_error',
      code: 'upstream_authentication_failed',
      retryable: true,
    },
    {
      fixture: 'error-401-invalid-key',
      upstreamStatus: 401,
      status: 502,
      type: 'upstream_error',
      code: 'upstream_authentication_failed',
      retryable: true,
    },
    {
      fixture: 'error-403-permission-denied',
      upstreamStatus: 403,
      status: 502,
      type: 'upstream_error',
      code: 'upstream_authentication_failed',
      retryable: true,
    },
    {
      fixture: 'error-404-deployment-not-found',
      upstreamStatus: 404,
      status: 502,
      type: 'upstream_error',
      code: 'upstream_model_not_found',
      retryable: true,
    },
    {
      fixture: 'error-429',
      upstreamStatus: 429,
      headers: { 'retry-after': '6' },
      status: 429,
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      retryable: true,
    },
    {
      fixture: 'error-500',
      upstreamStatus: 500,
      status: 502,
      type: 'upstream_error',
      code: 'InternalServerError',
      retryable: true,
    },
  ],
});

describe('azure-openai golden fixtures: values', () => {
  it('text: the prompt-filter chunk starts nothing; the answer, id and usage come from the real chunks', async () => {
    const parts = runStream(await fixture('text.chunks.txt'));
    expect(parts[0]).toMatchObject({ type: 'response-start', id: 'chatcmpl-BsQ4wKX8tYHnJ2mC5vRa9LpE3dFgZ' });
    expect(parts.filter((part) => part.type === 'response-start')).toHaveLength(1);
    const text = parts.flatMap((part) => (part.type === 'text-delta' ? [part.delta] : [])).join('');
    expect(text).toBe('The capital of France is Paris.');
    expect(parts.find((part) => part.type === 'usage')).toMatchObject({
      usage: { inputTokens: 14, outputTokens: 7, totalTokens: 21 },
    });
  });

  it('tools: two parallel calls, with cached prompt tokens', async () => {
    const response = translator.parseChatResponse(await jsonFixture('tools.json'));
    expect(response.choices[0]?.toolCalls.map((call) => [call.id, call.name, parseJson(call.arguments)])).toEqual([
      [
        'call_x7RkP2mQ9vLs4TnB8wYe3HaZ',
        'get_weather',
        { ok: true, value: { location: 'Paris, France', unit: 'celsius' } },
      ],
      [
        'call_D4gFh6JkL1zXc9VbN2mQw8Er',
        'get_weather',
        { ok: true, value: { location: 'Tokyo, Japan', unit: 'celsius' } },
      ],
    ]);
    expect(response.choices[0]?.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_calls' });
    expect(response.usage).toMatchObject({ inputTokens: 1150, cachedInputTokens: 1024, outputTokens: 58 });
  });

  it('content-filter: a filtered completion finishes as content-filter, raw kept, in both readings', async () => {
    const response = translator.parseChatResponse(await jsonFixture('content-filter.json'));
    expect(response.choices[0]?.text).toBeNull();
    expect(response.choices[0]?.finishReason).toEqual({ unified: 'content-filter', raw: 'content_filter' });
    const parts = runStream(await fixture('content-filter.chunks.txt'));
    expect(parts.find((part) => part.type === 'finish')).toMatchObject({
      finishReason: { unified: 'content-filter', raw: 'content_filter' },
    });
    expect(parts.some((part) => part.type === 'text-delta')).toBe(false);
  });

  it("a filtered prompt keeps Azure's message, which routing's content-policy fallback recognises", async () => {
    const error = translator.mapError(400, await jsonFixture('error-400-content-filter.json'), new Headers());
    expect(error.code).toBe('content_filter');
    expect(error.param).toBe('prompt');
    expect(error.message).toMatch(/^The response was filtered due to the prompt triggering Azure OpenAI's content/);
  });

  it("the {statusCode, message} 401 keeps Azure's message", async () => {
    const error = translator.mapError(401, await jsonFixture('error-401.json'), new Headers());
    expect(error.message).toContain('Access token is missing, invalid');
  });

  it('a content_filter error inside a stream is a 400, mapped as Azure', () => {
    const state = translator.chatStream.init();
    let thrown: unknown;
    try {
      translator.chatStream.onEvent(state, {
        type: undefined,
        data: { error: { code: 'content_filter', message: 'The response was filtered.', param: 'prompt' } },
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ status: 400, code: 'content_filter', provider: 'azure-openai' });
  });
});
