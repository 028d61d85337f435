import { describe, expect, it } from 'vitest';
import type { CanonicalStreamPart } from '../../src/canonical/index.ts';
import { isGatewayError } from '../../src/errors.ts';
import { openAICompatibleChatStream } from './openai-compatible-stream.ts';
import { caught } from './openai-compatible-test-support.ts';

/** Runs chunk objects (what the framing hands over after JSON parsing) through a fresh reducer. */
function reduce(chunks: unknown[]): CanonicalStreamPart[] {
  const state = openAICompatibleChatStream.init();
  const parts = chunks.flatMap((data) => openAICompatibleChatStream.onEvent(state, { type: undefined, data }));
  return [...parts, ...openAICompatibleChatStream.onEnd(state)];
}

const head = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: 'gpt-4o' };

function chunk(delta: Record<string, unknown>, finishReason: string | null = null, index = 0): Record<string, unknown> {
  return { ...head, choices: [{ index, delta, logprobs: null, finish_reason: finishReason }] };
}

describe('openAICompatibleChatStream', () => {
  it('yields start, text deltas, finish and the usage last', () => {
    const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
    expect(
      reduce([
        { ...chunk({ role: 'assistant', content: '' }), usage: null },
        { ...chunk({ content: 'Hel' }), usage: null },
        { ...chunk({ content: 'lo' }), usage: null },
        { ...chunk({}, 'stop'), usage: null },
        { ...head, choices: [], usage },
      ]),
    ).toEqual([
      { type: 'response-start', id: 'chatcmpl-1', model: 'gpt-4o', created: 1700000000 },
      { type: 'text-delta', choiceIndex: 0, delta: 'Hel' },
      { type: 'text-delta', choiceIndex: 0, delta: 'lo' },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'stop', raw: 'stop' } },
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5, raw: usage } },
    ]);
  });

  it('yields reasoning deltas from reasoning_content and reasoning', () => {
    const parts = reduce([
      chunk({ reasoning_content: 'think ' }),
      chunk({ reasoning: 'more' }),
      chunk({ content: 'done', reasoning_content: null }, 'stop'),
    ]);
    expect(parts.filter((part) => part.type === 'reasoning-delta' || part.type === 'text-delta')).toEqual([
      { type: 'reasoning-delta', choiceIndex: 0, delta: 'think ' },
      { type: 'reasoning-delta', choiceIndex: 0, delta: 'more' },
      { type: 'text-delta', choiceIndex: 0, delta: 'done' },
    ]);
  });

  it('streams tool calls by index: start once with id and name, then argument deltas, then finish', () => {
    const parts = reduce([
      chunk({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(parts.slice(1)).toEqual([
      { type: 'tool-input-start', choiceIndex: 0, toolIndex: 0, id: 'call_a', name: 'f' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '{"x":' },
      { type: 'tool-input-start', choiceIndex: 0, toolIndex: 1, id: 'call_b', name: 'g' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 1, delta: '{}' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '1}' },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'tool-calls', raw: 'tool_calls' } },
    ]);
  });

  it('follows tool calls without index by id, and whole calls sent in one chunk (Mistral)', () => {
    const parts = reduce([
      chunk(
        {
          tool_calls: [
            { id: 'a', function: { name: 'f', arguments: '{"p":1}' } },
            { id: 'b', function: { name: 'g', arguments: { q: 2 } } },
          ],
        },
        'tool_calls',
      ),
    ]);
    expect(parts.slice(1)).toEqual([
      { type: 'tool-input-start', choiceIndex: 0, toolIndex: 0, id: 'a', name: 'f' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '{"p":1}' },
      { type: 'tool-input-start', choiceIndex: 0, toolIndex: 1, id: 'b', name: 'g' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 1, delta: '{"q":2}' },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'tool-calls', raw: 'tool_calls' } },
    ]);
  });

  it('holds arguments that arrive before the tool name, and invents a missing id', () => {
    const parts = reduce([
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { name: 'late', arguments: ':1}' } }] }),
      chunk({}, 'stop'),
    ]);
    const start = parts[1];
    expect(start).toMatchObject({ type: 'tool-input-start', toolIndex: 0, name: 'late' });
    expect(start).toHaveProperty('id', expect.stringMatching(/^call_[0-9a-f]{32}$/));
    expect(parts.slice(2)).toEqual([
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '{"a"' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: ':1}' },
      // A `stop` with tool calls (older Ollama) is reported as tool calls; raw keeps what the upstream said.
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'tool-calls', raw: 'stop' } },
    ]);
  });

  it('keeps several choices apart by index (n > 1)', () => {
    const parts = reduce([
      {
        ...head,
        choices: [
          { index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null },
          { index: 1, delta: { role: 'assistant', content: '' }, finish_reason: null },
        ],
      },
      chunk({ content: 'A' }, null, 0),
      chunk({ content: 'B' }, null, 1),
      chunk({}, 'length', 1),
      chunk({ content: 'A2' }, null, 0),
      chunk({}, 'stop', 0),
    ]);
    expect(parts.slice(1)).toEqual([
      { type: 'text-delta', choiceIndex: 0, delta: 'A' },
      { type: 'text-delta', choiceIndex: 1, delta: 'B' },
      { type: 'finish', choiceIndex: 1, finishReason: { unified: 'length', raw: 'length' } },
      { type: 'text-delta', choiceIndex: 0, delta: 'A2' },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'stop', raw: 'stop' } },
    ]);
  });

  it("starts after Azure's id-less prompt-filter chunk", () => {
    const parts = reduce([
      { id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: [{ prompt_index: 0 }] },
      chunk({ content: 'x' }, 'stop'),
    ]);
    expect(parts[0]).toEqual({ type: 'response-start', id: 'chatcmpl-1', model: 'gpt-4o', created: 1700000000 });
  });

  it('reports usage once, the latest, when an upstream repeats it; reads Groq x_groq usage', () => {
    const repeated = reduce([
      { ...chunk({ content: 'a' }), usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } },
      { ...chunk({ content: 'b' }, 'stop'), usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
    ]);
    const usages = repeated.filter((part) => part.type === 'usage');
    expect(usages).toHaveLength(1);
    expect(usages[0]).toMatchObject({ usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } });
    expect(repeated.at(-1)?.type).toBe('usage');

    const groq = reduce([
      {
        ...chunk({}, 'stop'),
        x_groq: { id: 'req_1', usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 } },
      },
    ]);
    expect(groq.at(-1)).toMatchObject({ type: 'usage', usage: { inputTokens: 9, outputTokens: 4, totalTokens: 13 } });
  });

  it('yields no usage when the upstream sent none', () => {
    expect(reduce([chunk({ content: 'x' }, 'stop')]).some((part) => part.type === 'usage')).toBe(false);
  });

  it('finishes once per choice, ignores parts after it, and ends unfinished choices with other', () => {
    const repeated = reduce([chunk({ content: 'a' }, 'stop'), chunk({ content: 'late' }, 'stop')]);
    expect(repeated.slice(1)).toEqual([
      { type: 'text-delta', choiceIndex: 0, delta: 'a' },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'stop', raw: 'stop' } },
    ]);
    const cut = reduce([chunk({ tool_calls: [{ index: 0, id: 'c', function: { arguments: '{}' } }] })]);
    expect(cut.slice(1)).toEqual([
      { type: 'tool-input-start', choiceIndex: 0, toolIndex: 0, id: 'c', name: '' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '{}' },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'other', raw: undefined } },
    ]);
  });

  it('yields nothing for an empty stream', () => {
    expect(reduce([])).toEqual([]);
  });

  it('throws the mapped GatewayError for an error event', () => {
    const state = openAICompatibleChatStream.init();
    openAICompatibleChatStream.onEvent(state, { type: undefined, data: chunk({ content: 'partial' }) });
    const error = caught(() =>
      openAICompatibleChatStream.onEvent(state, {
        type: undefined,
        data: { error: { message: 'The server had an error', type: 'server_error', param: null, code: null } },
      }),
    );
    expect(isGatewayError(error)).toBe(true);
    expect(error).toMatchObject({
      status: 502,
      type: 'upstream_error',
      retryable: true,
      message: 'The server had an error',
    });
    const vllm = caught(() =>
      reduce([
        { error: { object: 'error', message: 'prompt too long', type: 'BadRequestError', param: null, code: 400 } },
      ]),
    );
    expect(vllm).toMatchObject({ status: 400, type: 'invalid_request_error', message: 'prompt too long' });
  });

  it('throws a 502 for a chunk of another shape', () => {
    const error = caught(() => reduce([{ ...head, choices: [{ index: 0, delta: { content: 42 } }] }]));
    expect(isGatewayError(error)).toBe(true);
    expect(error).toMatchObject({ status: 502, code: 'upstream_invalid_response' });
  });

  it('reports a stream that closed without data: [DONE] as cut off, once the framing says so', () => {
    const state = openAICompatibleChatStream.init();
    openAICompatibleChatStream.onEvent(state, { type: undefined, data: chunk({ content: 'Hel' }) });
    const cut = openAICompatibleChatStream.onEnd(state, { sentinel: false });
    expect(cut.at(-1)).toMatchObject({
      type: 'error',
      error: { status: 502, code: 'upstream_stream_incomplete', retryable: false },
    });
    const whole = openAICompatibleChatStream.init();
    openAICompatibleChatStream.onEvent(whole, { type: undefined, data: chunk({}, 'stop') });
    expect(openAICompatibleChatStream.onEnd(whole, { sentinel: true }).map((part) => part.type)).toEqual([]);
  });
});
