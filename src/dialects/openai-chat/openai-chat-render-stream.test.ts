import { describe, expect, it } from 'vitest';
import type { CanonicalStreamPart } from '../../canonical/canonical-stream-part.ts';
import { GatewayError } from '../../errors.ts';
import {
  createOpenAIChunkRendererState,
  renderOpenAIStreamEnd,
  renderOpenAIStreamPart,
} from './openai-chat-render-stream.ts';

const start: CanonicalStreamPart = { type: 'response-start', id: 'msg_1', model: 'claude-x', created: 1_750_000_000 };

function render(parts: CanonicalStreamPart[], includeUsage: boolean): Record<string, unknown>[] {
  const state = createOpenAIChunkRendererState(includeUsage, 'fallback-model');
  const payloads = parts.flatMap((part) => renderOpenAIStreamPart(state, part));
  return [...payloads, ...renderOpenAIStreamEnd(state)].map(
    (payload) => JSON.parse(payload) as Record<string, unknown>,
  );
}

const usagePart: CanonicalStreamPart = {
  type: 'usage',
  usage: { inputTokens: 12, outputTokens: 30, totalTokens: 42, cachedInputTokens: 4, reasoningTokens: 25 },
};

describe('renderOpenAIStreamPart', () => {
  it('renders deltas as chat.completion.chunk objects, with the role on the first chunk of a choice only', () => {
    const chunks = render(
      [
        start,
        { type: 'reasoning-delta', choiceIndex: 0, delta: 'Thinking' },
        { type: 'text-delta', choiceIndex: 0, delta: 'Hi' },
        { type: 'finish', choiceIndex: 0, finishReason: { unified: 'stop', raw: 'end_turn' } },
      ],
      false,
    );
    expect(chunks).toEqual([
      {
        id: 'msg_1',
        object: 'chat.completion.chunk',
        created: 1_750_000_000,
        model: 'claude-x',
        choices: [
          {
            index: 0,
            delta: { role: 'assistant', reasoning_content: 'Thinking' },
            logprobs: null,
            finish_reason: null,
          },
        ],
      },
      {
        id: 'msg_1',
        object: 'chat.completion.chunk',
        created: 1_750_000_000,
        model: 'claude-x',
        choices: [{ index: 0, delta: { content: 'Hi' }, logprobs: null, finish_reason: null }],
      },
      {
        id: 'msg_1',
        object: 'chat.completion.chunk',
        created: 1_750_000_000,
        model: 'claude-x',
        choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }],
      },
    ]);
  });

  it('renders tool input start and deltas with the tool index', () => {
    const chunks = render(
      [
        start,
        { type: 'tool-input-start', choiceIndex: 0, toolIndex: 0, id: 'toolu_1', name: 'get_weather' },
        { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '{"city":' },
        { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '"Paris"}' },
        { type: 'finish', choiceIndex: 0, finishReason: { unified: 'tool-calls', raw: 'tool_use' } },
      ],
      false,
    );
    expect(chunks.map((chunk) => (chunk.choices as { delta: unknown; finish_reason: unknown }[])[0])).toEqual([
      {
        index: 0,
        delta: {
          role: 'assistant',
          tool_calls: [{ index: 0, id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '' } }],
        },
        logprobs: null,
        finish_reason: null,
      },
      {
        index: 0,
        delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
        logprobs: null,
        finish_reason: null,
      },
      {
        index: 0,
        delta: { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
        logprobs: null,
        finish_reason: null,
      },
      { index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' },
    ]);
  });

  it.each<[CanonicalStreamPart & { type: 'finish' }, string]>([
    [{ type: 'finish', choiceIndex: 0, finishReason: { unified: 'length', raw: 'max_tokens' } }, 'length'],
    [{ type: 'finish', choiceIndex: 0, finishReason: { unified: 'content-filter', raw: 'refusal' } }, 'content_filter'],
    [{ type: 'finish', choiceIndex: 0, finishReason: { unified: 'other', raw: 'pause_turn' } }, 'stop'],
  ])('renders the finish reason %j as %s', (part, expected) => {
    const [chunk] = render([start, part], false);
    expect((chunk?.choices as { finish_reason: string }[])[0]?.finish_reason).toBe(expected);
  });

  it('uses the fallback model until the upstream names its own', () => {
    const [chunk] = render([{ type: 'text-delta', choiceIndex: 0, delta: 'x' }], false);
    expect(chunk?.model).toBe('fallback-model');
  });

  it('sends a role chunk per choice', () => {
    const chunks = render(
      [
        start,
        { type: 'text-delta', choiceIndex: 0, delta: 'a' },
        { type: 'text-delta', choiceIndex: 1, delta: 'b' },
        { type: 'text-delta', choiceIndex: 1, delta: 'c' },
      ],
      false,
    );
    expect(chunks.map((chunk) => (chunk.choices as { delta: unknown }[])[0]?.delta)).toEqual([
      { role: 'assistant', content: 'a' },
      { role: 'assistant', content: 'b' },
      { content: 'c' },
    ]);
  });

  it('renders an error part as an OpenAI error envelope', () => {
    const error = new GatewayError({
      status: 503,
      type: 'upstream_error',
      code: 'upstream_overloaded',
      message: 'Overloaded',
    });
    expect(render([start, { type: 'error', error }], false)).toEqual([
      { error: { message: 'Overloaded', type: 'upstream_error', param: null, code: 'upstream_overloaded' } },
    ]);
  });
});

describe('renderOpenAIStreamEnd', () => {
  it('holds usage back and sends it last, with details, when the client asked for it', () => {
    const chunks = render([start, usagePart, { type: 'text-delta', choiceIndex: 0, delta: 'Hi' }], true);
    expect(chunks).toHaveLength(2);
    expect(chunks[0]?.usage).toBeNull();
    expect(chunks[1]).toEqual({
      id: 'msg_1',
      object: 'chat.completion.chunk',
      created: 1_750_000_000,
      model: 'claude-x',
      choices: [],
      usage: {
        prompt_tokens: 12,
        completion_tokens: 30,
        total_tokens: 42,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 25 },
      },
    });
  });

  it('sends no usage when the client did not ask for it, or when none came', () => {
    const withoutAsking = render([start, { type: 'text-delta', choiceIndex: 0, delta: 'Hi' }, usagePart], false);
    expect(withoutAsking).toHaveLength(1);
    expect('usage' in (withoutAsking[0] ?? {})).toBe(false);
    expect(render([start, { type: 'text-delta', choiceIndex: 0, delta: 'Hi' }], true)).toHaveLength(1);
  });
});
