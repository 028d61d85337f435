import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import type { CanonicalStreamPart } from '../../canonical/canonical-stream-part.ts';
import { GatewayError, upstreamError } from '../../errors.ts';
import { createAnthropicStreamRenderer, renderAnthropicStreamBreak } from './anthropic-messages-render-stream.ts';

interface RenderedEvent {
  event: string;
  data: Record<string, unknown>;
}

const context = { fallbackModel: 'fallback-model', estimatedInputTokens: 40, requestModel: 'claude-group' };
const signature =
  'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds8H2Ak8CoBR8Rg1IHlpuwM4jSyYJTpmk3wIIDCtfw3Zak5ozcdsR8RTHhNtgmBQ';

function renderAll(parts: CanonicalStreamPart[], withEnd = true): string {
  const renderer = createAnthropicStreamRenderer(context);
  const body = parts.map((part) => renderer.render(part)).join('');
  return withEnd ? body + renderer.end() : body;
}

/** Splits framed output into events, insisting on `event: <name>\ndata: <one JSON line>\n\n` for every one. */
function eventsOf(text: string): RenderedEvent[] {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      const match = /^event: ([a-z_]+)\ndata: ([^\n]+)$/.exec(block);
      expect(match, block).not.toBeNull();
      const data = JSON.parse(match![2]!) as Record<string, unknown>;
      expect(data.type).toBe(match![1]);
      return { event: match![1]!, data };
    });
}

/** Anthropic's stream grammar, checked event by event; returns the message the events build. */
function checkGrammar(events: RenderedEvent[]): { content: Record<string, unknown>[]; stopReason: unknown } {
  expect(events[0]?.event).toBe('message_start');
  expect(events.at(-1)?.event).toBe('message_stop');
  expect(events.at(-2)?.event).toBe('message_delta');
  const content: Record<string, unknown>[] = [];
  let open: number | undefined;
  for (const { event, data } of events.slice(1, -2)) {
    if (event === 'ping') continue;
    if (event === 'content_block_start') {
      expect(open).toBeUndefined();
      expect(data.index).toBe(content.length);
      open = data.index as number;
      content.push({ ...(data.content_block as Record<string, unknown>) });
      continue;
    }
    expect(data.index).toBe(open);
    const block = content[open!]!;
    if (event === 'content_block_stop') {
      if (block.type === 'tool_use' && typeof block.partial === 'string') {
        block.input = JSON.parse(block.partial) as unknown;
        delete block.partial;
      }
      open = undefined;
      continue;
    }
    expect(event).toBe('content_block_delta');
    const delta = data.delta as Record<string, string>;
    const expectedBlock = {
      text_delta: 'text',
      thinking_delta: 'thinking',
      signature_delta: 'thinking',
      input_json_delta: 'tool_use',
    }[delta.type!];
    expect(block.type).toBe(expectedBlock);
    if (delta.type === 'text_delta') block.text = `${block.text as string}${delta.text}`;
    if (delta.type === 'thinking_delta') block.thinking = `${block.thinking as string}${delta.thinking}`;
    if (delta.type === 'signature_delta') block.signature = delta.signature;
    if (delta.type === 'input_json_delta')
      block.partial = `${(block.partial as string | undefined) ?? ''}${delta.partial_json}`;
  }
  expect(open).toBeUndefined();
  const messageDelta = events.at(-2)!.data.delta as Record<string, unknown>;
  return { content, stopReason: messageDelta.stop_reason };
}

const start: CanonicalStreamPart = {
  type: 'response-start',
  id: 'msg_01JxVqW3nkQ7Y2bZoHm4tRfP',
  model: 'claude-sonnet-4-5',
  created: 1,
};
const finishTools: CanonicalStreamPart = {
  type: 'finish',
  choiceIndex: 0,
  finishReason: { unified: 'tool-calls', raw: 'tool_use' },
};

/** What an Anthropic upstream's reducer yields: explicit block starts and ends, usage up front and at the end. */
const blockParts: CanonicalStreamPart[] = [
  start,
  {
    type: 'usage',
    usage: {
      inputTokens: 1939,
      outputTokens: 3,
      totalTokens: 1942,
      cachedInputTokens: 48,
      cacheWriteInputTokens: 1502,
    },
  },
  { type: 'reasoning-start', choiceIndex: 0 },
  { type: 'reasoning-delta', choiceIndex: 0, delta: 'The user wants the weather. ' },
  { type: 'reasoning-delta', choiceIndex: 0, delta: 'I will call the tool twice.' },
  { type: 'reasoning-end', choiceIndex: 0, signature },
  { type: 'text-start', choiceIndex: 0 },
  { type: 'text-delta', choiceIndex: 0, delta: "I'll check the weather × 2 " },
  { type: 'text-delta', choiceIndex: 0, delta: 'for you.' },
  { type: 'text-end', choiceIndex: 0 },
  { type: 'tool-input-start', choiceIndex: 0, toolIndex: 0, id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather' },
  { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '{"location": "San Fr' },
  { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: 'ancisco, CA"' },
  { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: ', "unit": "celsius"}' },
  { type: 'tool-input-end', choiceIndex: 0, toolIndex: 0 },
  { type: 'tool-input-start', choiceIndex: 0, toolIndex: 1, id: 'toolu_01Wv8Vfz9Xk3mTqHr2sLbN4p', name: 'get_weather' },
  { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 1, delta: '{"location": "Tok' },
  { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 1, delta: 'yo, Japan", "unit": "c' },
  { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 1, delta: 'elsius"}' },
  { type: 'tool-input-end', choiceIndex: 0, toolIndex: 1 },
  finishTools,
  {
    type: 'usage',
    usage: {
      inputTokens: 1939,
      outputTokens: 134,
      totalTokens: 2073,
      cachedInputTokens: 48,
      cacheWriteInputTokens: 1502,
    },
  },
];

const expectedContent = [
  { type: 'thinking', thinking: 'The user wants the weather. I will call the tool twice.', signature },
  { type: 'text', text: "I'll check the weather × 2 for you." },
  {
    type: 'tool_use',
    id: 'toolu_01A09q90qw90lq917835lq9',
    name: 'get_weather',
    input: { location: 'San Francisco, CA', unit: 'celsius' },
  },
  {
    type: 'tool_use',
    id: 'toolu_01Wv8Vfz9Xk3mTqHr2sLbN4p',
    name: 'get_weather',
    input: { location: 'Tokyo, Japan', unit: 'celsius' },
  },
];

/** The same answer as an OpenAI upstream's reducer yields it: deltas only, no block boundaries, usage at the end. */
const deltaParts: CanonicalStreamPart[] = blockParts.filter((part) =>
  ['response-start', 'reasoning-delta', 'text-delta', 'tool-input-start', 'tool-input-delta', 'finish'].includes(
    part.type,
  ),
);

describe('createAnthropicStreamRenderer', () => {
  it('renders a thinking, text and tool_use answer in Anthropic event grammar', () => {
    const events = eventsOf(renderAll(blockParts));
    expect(events.map(({ event }) => event)).toEqual([
      'message_start',
      'ping',
      ...[
        'content_block_start',
        'content_block_delta',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
      ],
      ...['content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop'],
      ...[
        'content_block_start',
        'content_block_delta',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
      ],
      ...[
        'content_block_start',
        'content_block_delta',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
      ],
      'message_delta',
      'message_stop',
    ]);
    const { content, stopReason } = checkGrammar(events);
    expect(content).toEqual(expectedContent);
    expect(stopReason).toBe('tool_use');
    expect(events[0]!.data).toEqual({
      type: 'message_start',
      message: {
        id: 'msg_01JxVqW3nkQ7Y2bZoHm4tRfP',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 389, cache_creation_input_tokens: 1502, cache_read_input_tokens: 48, output_tokens: 0 },
      },
    });
    expect(events.at(-2)!.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: 134, input_tokens: 389, cache_creation_input_tokens: 1502, cache_read_input_tokens: 48 },
    });
  });

  it('infers the same blocks from deltas alone', () => {
    const { content, stopReason } = checkGrammar(eventsOf(renderAll(deltaParts)));
    expect(content).toEqual(
      expectedContent.map((block) => (block.type === 'thinking' ? { ...block, signature: '' } : block)),
    );
    expect(stopReason).toBe('tool_use');
  });

  it('is read by the Anthropic SDK as the message it describes', async () => {
    const body = renderAll(blockParts);
    const client = new Anthropic({
      apiKey: 'test',
      maxRetries: 0,
      fetch: () => Promise.resolve(new Response(body, { headers: { 'content-type': 'text/event-stream' } })),
    });
    const stream = client.messages.stream({
      model: 'claude',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const message = await stream.finalMessage();
    expect(message.content).toEqual(expectedContent);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 389, output_tokens: 134, cache_read_input_tokens: 48 });
  });

  it('puts the input tokens of a usage part that follows response-start into message_start', () => {
    const parts: CanonicalStreamPart[] = [
      start,
      { type: 'usage', usage: { inputTokens: 21, outputTokens: 1, totalTokens: 22 } },
      { type: 'text-delta', choiceIndex: 0, delta: 'Hi' },
    ];
    const message = eventsOf(renderAll(parts))[0]!.data.message as Record<string, unknown>;
    expect(message.usage).toEqual({
      input_tokens: 21,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 0,
    });
  });

  it('estimates the input tokens in message_start when usage comes only at the end, and reports it in message_delta', () => {
    const parts: CanonicalStreamPart[] = [
      start,
      { type: 'text-delta', choiceIndex: 0, delta: 'Hi' },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'stop', raw: 'stop' } },
      { type: 'usage', usage: { inputTokens: 19, outputTokens: 10, totalTokens: 29, cachedInputTokens: 4 } },
    ];
    const events = eventsOf(renderAll(parts));
    expect((events[0]!.data.message as Record<string, unknown>).usage).toMatchObject({
      input_tokens: 40,
      output_tokens: 0,
    });
    expect(events.at(-2)!.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 10, input_tokens: 15, cache_creation_input_tokens: 0, cache_read_input_tokens: 4 },
    });
  });

  it('emits a well-formed message when nothing but the end arrives', () => {
    const events = eventsOf(createAnthropicStreamRenderer(context).end());
    expect(events.map(({ event }) => event)).toEqual(['message_start', 'ping', 'message_delta', 'message_stop']);
    const message = events[0]!.data.message as Record<string, unknown>;
    expect(message.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(message.model).toBe('fallback-model');
    expect(events[2]!.data).toMatchObject({
      delta: { stop_reason: 'end_turn' },
      usage: { output_tokens: 0, input_tokens: 40 },
    });
  });

  it('normalises the message id and falls back to the context model', () => {
    const events = eventsOf(renderAll([{ type: 'response-start', id: 'chatcmpl-B9M.x', model: '', created: 1 }]));
    expect(events[0]!.data.message).toMatchObject({ id: 'msg_chatcmplB9Mx', model: 'fallback-model' });
  });

  it('renders an error part as the error event and nothing after it', () => {
    const renderer = createAnthropicStreamRenderer(context);
    let output = renderer.render(start) + renderer.render({ type: 'text-delta', choiceIndex: 0, delta: 'Hel' });
    const error = upstreamError('upstream_stream_incomplete', 'groq', 'The stream ended early.');
    output += renderer.render({ type: 'error', error });
    output += renderer.render({ type: 'text-delta', choiceIndex: 0, delta: 'lo' });
    output += renderer.end();
    const events = eventsOf(output);
    expect(events.map(({ event }) => event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'error',
    ]);
    expect(events.at(-1)!.data).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'The stream ended early.' },
    });
  });

  it('renders only choice 0', () => {
    const parts: CanonicalStreamPart[] = [
      start,
      { type: 'text-delta', choiceIndex: 1, delta: 'other choice' },
      { type: 'text-delta', choiceIndex: 0, delta: 'first choice' },
      { type: 'finish', choiceIndex: 1, finishReason: { unified: 'length', raw: 'length' } },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'stop', raw: 'stop' } },
    ];
    const { content, stopReason } = checkGrammar(eventsOf(renderAll(parts)));
    expect(content).toEqual([{ type: 'text', text: 'first choice' }]);
    expect(stopReason).toBe('end_turn');
  });

  it('keeps interleaved tool fragments whole, rendering other blocks after the open tool input completes', () => {
    const parts: CanonicalStreamPart[] = [
      start,
      { type: 'tool-input-start', choiceIndex: 0, toolIndex: 0, id: 'call_a', name: 'alpha' },
      { type: 'tool-input-start', choiceIndex: 0, toolIndex: 1, id: 'call_b', name: 'beta' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '{"a":"}' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 1, delta: '{"b":' },
      { type: 'text-delta', choiceIndex: 0, delta: ' ' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '\\"{"}' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 1, delta: '2}' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: ' ' },
      finishTools,
    ];
    const { content } = checkGrammar(eventsOf(renderAll(parts)));
    expect(content).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'alpha', input: { a: '}"{' } },
      { type: 'tool_use', id: 'call_b', name: 'beta', input: { b: 2 } },
      { type: 'text', text: ' ' },
    ]);
  });

  it('opens no block for empty content, but renders a signature even without thinking text', () => {
    const parts: CanonicalStreamPart[] = [
      start,
      { type: 'reasoning-start', choiceIndex: 0 },
      { type: 'reasoning-end', choiceIndex: 0, signature },
      { type: 'text-start', choiceIndex: 0 },
      { type: 'text-delta', choiceIndex: 0, delta: '' },
      { type: 'text-end', choiceIndex: 0 },
      { type: 'text-delta', choiceIndex: 0, delta: 'a' },
      { type: 'text-start', choiceIndex: 0 },
      { type: 'text-delta', choiceIndex: 0, delta: 'b' },
    ];
    const { content } = checkGrammar(eventsOf(renderAll(parts)));
    expect(content).toEqual([
      { type: 'thinking', thinking: '', signature },
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
    ]);
  });
});

describe('renderAnthropicStreamBreak', () => {
  it('frames the Anthropic error envelope as event: error', () => {
    const error = new GatewayError({ status: 529, type: 'api_error', message: 'Overloaded' });
    expect(renderAnthropicStreamBreak(error)).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    );
  });
});
