import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { CanonicalStreamPart } from '../../canonical/canonical-stream-part.ts';
import { GatewayError, upstreamError } from '../../errors.ts';
import {
  createResponsesStreamRenderer,
  renderResponsesStreamBreak,
  responsesOutputItemId,
} from './openai-responses-render-stream.ts';

interface RenderedEvent {
  event: string;
  data: Record<string, unknown>;
}

type Item = Record<string, unknown>;

const idPrefixes: Record<string, string> = { message: 'msg', reasoning: 'rs', function_call: 'fc' };

const fixtureText = readFileSync(new URL('./__fixtures__/openai-responses-stream.txt', import.meta.url), 'utf8');
const responseId = 'resp_7f3a9c1e5b2d4f6081a3c5e7b9d1f3a5';
const suffix = responseId.slice('resp_'.length);
const request = { model: 'gpt-5-group', input: 'Weather in Paris and Tokyo?', stream: true };
const context = {
  fallbackModel: 'fallback-model',
  estimatedInputTokens: 40,
  responseId,
  createdAt: 1757605100,
  request,
};

function renderAll(parts: CanonicalStreamPart[], options: { request?: Record<string, unknown> } = {}) {
  const renderer = createResponsesStreamRenderer({ ...context, request: options.request ?? request });
  const text = parts.map((part) => renderer.render(part)).join('') + renderer.end();
  return { text, final: renderer.finalResponse() };
}

/** The openai SDK's `responses.stream` over `text` served as the body of `POST /responses`. */
function sdkStream(text: string, requests: string[] = []) {
  const client = new OpenAI({
    apiKey: 'test',
    maxRetries: 0,
    fetch: (url) => {
      requests.push(String(url));
      return Promise.resolve(new Response(text, { headers: { 'content-type': 'text/event-stream' } }));
    },
  });
  return client.responses.stream({ model: 'gpt-5-group', input: 'Weather in Paris and Tokyo?' });
}

/** Splits framed output into events, insisting on `event: <name>\ndata: <one JSON line>\n\n` with `type` = name. */
function eventsOf(text: string): RenderedEvent[] {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      const match = /^event: ([a-z_.]+)\ndata: ([^\n]+)$/.exec(block);
      expect(match, block).not.toBeNull();
      const data = JSON.parse(match![2]!) as Record<string, unknown>;
      expect(data.type).toBe(match![1]);
      return { event: match![1]!, data };
    });
}

/** The Responses grammar, checked event by event; returns the items the events spell and the terminal response. */
function checkGrammar(events: RenderedEvent[]): { output: Item[]; response: Record<string, unknown> } {
  events.forEach(({ data }, index) => expect(data.sequence_number).toBe(index));
  expect(events.slice(0, 2).map(({ event }) => event)).toEqual(['response.created', 'response.in_progress']);
  for (const { data } of events.slice(0, 2))
    expect(data.response).toMatchObject({ id: responseId, status: 'in_progress', output: [], usage: null });
  const terminal = events.at(-1)!;
  expect(['response.completed', 'response.incomplete', 'response.failed']).toContain(terminal.event);
  const output: Item[] = [];
  let open: Item | undefined;
  for (const { event, data } of events.slice(2, -1)) {
    if (event === 'response.output_item.added') {
      expect(open).toBeUndefined();
      expect(data.output_index).toBe(output.length);
      open = structuredClone(data.item as Item);
      expect(open.id).toBe(`${idPrefixes[open.type as string]}_${suffix}_${output.length}`);
      continue;
    }
    expect(open, event).toBeDefined();
    expect(data.output_index).toBe(output.length);
    if (event === 'response.output_item.done') {
      expect(data.item).toEqual({ ...open, status: (data.item as Item).status });
      output.push(data.item as Item);
      open = undefined;
      continue;
    }
    expect(data.item_id).toBe(open!.id);
    const item = open!;
    const kind = event.replace(/^response\./, '');
    if (item.type === 'message') {
      const content = item.content as Item[];
      expect(data.content_index).toBe(0);
      if (kind === 'content_part.added') content.push(data.part as Item);
      else if (kind === 'output_text.delta') content[0]!.text = `${content[0]!.text as string}${data.delta as string}`;
      else if (kind === 'output_text.done') expect(data.text).toBe(content[0]!.text);
      else if (kind === 'content_part.done') expect(data.part).toEqual(content[0]);
      else expect.unreachable(event);
    } else if (item.type === 'reasoning') {
      const summary = item.summary as Item[];
      expect(data.summary_index).toBe(0);
      if (kind === 'reasoning_summary_part.added') summary.push(data.part as Item);
      else if (kind === 'reasoning_summary_text.delta')
        summary[0]!.text = `${summary[0]!.text as string}${data.delta as string}`;
      else if (kind === 'reasoning_summary_text.done') expect(data.text).toBe(summary[0]!.text);
      else if (kind === 'reasoning_summary_part.done') expect(data.part).toEqual(summary[0]);
      else expect.unreachable(event);
    } else {
      expect(item.type).toBe('function_call');
      if (kind === 'function_call_arguments.delta')
        item.arguments = `${item.arguments as string}${data.delta as string}`;
      else if (kind === 'function_call_arguments.done')
        expect(data).toMatchObject({ arguments: item.arguments, name: item.name });
      else expect.unreachable(event);
    }
  }
  expect(open).toBeUndefined();
  const response = terminal.data.response as Record<string, unknown>;
  expect(response.output).toEqual(output);
  return { output, response };
}

/** OpenAI's recorded stream as the canonical parts a reducer of it would yield (deltas only, usage at the end). */
function partsFromFixture(): CanonicalStreamPart[] {
  const events = fixtureText
    .trimEnd()
    .split('\n\n')
    .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)) as Record<string, unknown>);
  const parts: CanonicalStreamPart[] = [
    { type: 'response-start', id: 'resp_68c2f0a91b3c', model: 'gpt-5-2025-08-07', created: 1757605033 },
  ];
  let toolIndex = -1;
  for (const event of events) {
    const item = event.item as Item | undefined;
    if (event.type === 'response.reasoning_summary_text.delta')
      parts.push({ type: 'reasoning-delta', choiceIndex: 0, delta: event.delta as string });
    if (event.type === 'response.output_text.delta')
      parts.push({ type: 'text-delta', choiceIndex: 0, delta: event.delta as string });
    if (event.type === 'response.output_item.added' && item?.type === 'function_call')
      parts.push({
        type: 'tool-input-start',
        choiceIndex: 0,
        toolIndex: ++toolIndex,
        id: item.call_id as string,
        name: item.name as string,
      });
    if (event.type === 'response.function_call_arguments.delta')
      parts.push({ type: 'tool-input-delta', choiceIndex: 0, toolIndex, delta: event.delta as string });
  }
  const usage = { inputTokens: 312, outputTokens: 205, totalTokens: 517, cachedInputTokens: 128, reasoningTokens: 64 };
  parts.push(
    { type: 'finish', choiceIndex: 0, finishReason: { unified: 'tool-calls', raw: 'tool_calls' } },
    { type: 'usage', usage },
  );
  return parts;
}

function weatherCall(index: number, city: string, callId: string): Item {
  const args = `{"city":"${city}","unit":"celsius"}`;
  return {
    id: `fc_${suffix}_${index}`,
    type: 'function_call',
    status: 'completed',
    arguments: args,
    call_id: callId,
    name: 'get_weather',
  };
}

const summary = '**Checking two cities**\n\nThe user wants Paris and 東京; I will call get_weather for each.';
const answer = 'Checking Paris and Tokyo (東京) — one moment 🌤';
const expectedOutput: Item[] = [
  { id: `rs_${suffix}_0`, type: 'reasoning', summary: [{ type: 'summary_text', text: summary }] },
  {
    id: `msg_${suffix}_1`,
    type: 'message',
    status: 'completed',
    content: [{ type: 'output_text', annotations: [], logprobs: [], text: answer }],
    role: 'assistant',
  },
  weatherCall(2, 'Paris', 'call_Qm1Yd8sXhT4vKc2NwE7bJp5R'),
  weatherCall(3, 'Tokyo', 'call_Lr6Gz0aVf3HjUe9SxB2kDn8W'),
];
const recordedUsage = {
  input_tokens: 312,
  input_tokens_details: { cached_tokens: 128 },
  output_tokens: 205,
  output_tokens_details: { reasoning_tokens: 64 },
  total_tokens: 517,
};

/** The same answer with explicit block boundaries (an Anthropic upstream's reducer), usage up front and at the end. */
function blockParts(): CanonicalStreamPart[] {
  const result: CanonicalStreamPart[] = [];
  let previous: string | undefined;
  for (const part of partsFromFixture()) {
    const kind = part.type.startsWith('reasoning') ? 'reasoning' : part.type.startsWith('text') ? 'text' : undefined;
    if (previous !== undefined && kind !== previous)
      result.push({ type: `${previous}-end` as 'text-end', choiceIndex: 0 });
    if (kind !== undefined && kind !== previous) result.push({ type: `${kind}-start` as 'text-start', choiceIndex: 0 });
    previous = kind;
    result.push(part);
    if (part.type === 'response-start')
      result.push({ type: 'usage', usage: { inputTokens: 312, outputTokens: 1, totalTokens: 313 } });
  }
  return result;
}

describe('createResponsesStreamRenderer', () => {
  it("renders OpenAI's recorded answer in exactly OpenAI's event sequence", () => {
    const { text, final } = renderAll(partsFromFixture());
    const events = eventsOf(text);
    const recorded = eventsOf(fixtureText);
    expect(events.map(({ event }) => event)).toEqual(recorded.map(({ event }) => event));
    const { output, response } = checkGrammar(events);
    expect(output).toEqual(expectedOutput);
    // The items OpenAI's own response.completed lists, but for their ids (the gateway's, from its response id).
    const recordedOutput = (recorded.at(-1)!.data.response as Item).output as Item[];
    expect(output).toEqual(recordedOutput.map((item, index) => ({ ...item, id: expectedOutput[index]!.id })));
    expect(response).toMatchObject({ id: responseId, status: 'completed', usage: recordedUsage, error: null });
    expect(final).toEqual(response);
  });

  it('infers the same items from explicit block boundaries, reasoning signatures dropped', () => {
    const parts = blockParts().map((part) =>
      part.type === 'reasoning-end' ? { ...part, signature: 'EqQBCgIYAhIM1gbcDa9G' } : part,
    );
    const { text } = renderAll(parts);
    expect(checkGrammar(eventsOf(text)).output).toEqual(expectedOutput);
    expect(text).not.toContain('EqQBCgIYAhIM1gbcDa9G');
  });

  it('echoes the request in the response object, with OpenAI defaults, and names the upstream model', () => {
    const { final } = renderAll(partsFromFixture());
    expect(final).toEqual({
      id: responseId,
      object: 'response',
      created_at: 1757605100,
      status: 'completed',
      background: false,
      completed_at: expect.any(Number) as unknown,
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      model: 'gpt-5-2025-08-07',
      output: expectedOutput,
      parallel_tool_calls: true,
      previous_response_id: null,
      prompt_cache_key: null,
      reasoning: { effort: null, summary: null },
      safety_identifier: null,
      store: true,
      temperature: 1,
      text: { format: { type: 'text' }, verbosity: 'medium' },
      tool_choice: 'auto',
      tools: [],
      top_p: 1,
      truncation: 'disabled',
      usage: recordedUsage,
      user: null,
      metadata: {},
    });
    const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: true }];
    const echoed = {
      instructions: 'Be brief.',
      tools,
      tool_choice: 'required',
      parallel_tool_calls: false,
      temperature: 0.2,
      top_p: 0.9,
      max_output_tokens: 800,
      previous_response_id: 'resp_previous',
      reasoning: { effort: 'high', summary: 'auto' },
      text: { format: { type: 'json_object' } },
      metadata: { ticket: 'T-1' },
      store: false,
      truncation: 'auto',
      user: 'user-7',
    };
    const created = eventsOf(renderAll([], { request: { ...request, ...echoed } }).text)[0]!.data.response;
    expect(created).toMatchObject({
      ...echoed,
      text: { ...echoed.text, verbosity: 'medium' },
      model: 'fallback-model',
      status: 'in_progress',
      completed_at: null,
    });
  });

  it('renders a well-formed empty response when nothing but the end arrives, with zero usage', () => {
    const events = eventsOf(createResponsesStreamRenderer(context).end());
    expect(events.map(({ event }) => event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.completed',
    ]);
    expect(checkGrammar(events).response).toMatchObject({
      output: [],
      model: 'fallback-model',
      usage: {
        input_tokens: 0,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 0,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 0,
      },
    });
  });

  it('starts at the first part and reports the latest usage', () => {
    const renderer = createResponsesStreamRenderer(context);
    const first = renderer.render({ type: 'response-start', id: 'chatcmpl-1', model: 'llama-3.3-70b', created: 1 });
    expect(eventsOf(first).map(({ event }) => event)).toEqual(['response.created', 'response.in_progress']);
    expect(renderer.finalResponse()).toBeUndefined();
    let text = first;
    text += renderer.render({ type: 'usage', usage: { inputTokens: 9, outputTokens: 1, totalTokens: 10 } });
    text += renderer.render({ type: 'text-delta', choiceIndex: 0, delta: 'Hi' });
    text += renderer.render({ type: 'usage', usage: { inputTokens: 9, outputTokens: 3, totalTokens: 12 } });
    text += renderer.end();
    expect(renderer.end()).toBe('');
    const { response } = checkGrammar(eventsOf(text));
    expect(response).toMatchObject({ model: 'llama-3.3-70b', usage: { input_tokens: 9, output_tokens: 3 } });
    expect(renderer.finalResponse()).toEqual(response);
  });

  it.each([
    ['length', 'max_output_tokens'],
    ['content-filter', 'content_filter'],
  ] as const)('ends a %s finish with response.incomplete', (unified, reason) => {
    const parts: CanonicalStreamPart[] = [
      { type: 'reasoning-delta', choiceIndex: 0, delta: 'Thinking' },
      { type: 'text-delta', choiceIndex: 0, delta: 'The answer is' },
      { type: 'finish', choiceIndex: 0, finishReason: { unified, raw: 'length' } },
    ];
    const events = eventsOf(renderAll(parts).text);
    expect(events.at(-1)!.event).toBe('response.incomplete');
    const { output, response } = checkGrammar(events);
    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason } });
    expect(output.map((item) => item.status)).toEqual([undefined, 'incomplete']);
  });

  it('renders an error part as response.failed and nothing after it', () => {
    const renderer = createResponsesStreamRenderer(context);
    let text = renderer.render({ type: 'text-delta', choiceIndex: 0, delta: 'Hel' });
    const error = upstreamError('upstream_stream_incomplete', 'groq', 'The stream ended early.');
    text += renderer.render({ type: 'error', error });
    text += renderer.render({ type: 'text-delta', choiceIndex: 0, delta: 'lo' });
    text += renderer.end();
    const events = eventsOf(text);
    expect(events.map(({ event }) => event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.failed',
    ]);
    events.forEach(({ data }, index) => expect(data.sequence_number).toBe(index));
    const response = events.at(-1)!.data.response as Record<string, unknown>;
    expect(response).toMatchObject({
      status: 'failed',
      error: { code: 'upstream_stream_incomplete', message: 'The stream ended early.' },
      usage: null,
      output: [{ id: `msg_${suffix}_0`, status: 'incomplete', content: [{ type: 'output_text', text: 'Hel' }] }],
    });
    expect(renderer.finalResponse()).toEqual(response);
  });

  it('renders only choice 0', () => {
    const parts: CanonicalStreamPart[] = [
      { type: 'text-delta', choiceIndex: 1, delta: 'other choice' },
      { type: 'text-delta', choiceIndex: 0, delta: 'first choice' },
      { type: 'finish', choiceIndex: 1, finishReason: { unified: 'length', raw: 'length' } },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'stop', raw: 'stop' } },
    ];
    const { output, response } = checkGrammar(eventsOf(renderAll(parts).text));
    expect(output).toMatchObject([{ type: 'message', content: [{ text: 'first choice' }] }]);
    expect(response.status).toBe('completed');
  });

  it('keeps interleaved tool fragments whole, rendering other items after the open call completes', () => {
    const parts: CanonicalStreamPart[] = [
      { type: 'tool-input-start', choiceIndex: 0, toolIndex: 0, id: 'call_a', name: 'alpha' },
      { type: 'tool-input-start', choiceIndex: 0, toolIndex: 1, id: 'call_b', name: 'beta' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '{"a":"}' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 1, delta: '{"b":' },
      { type: 'text-delta', choiceIndex: 0, delta: ' ' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '\\"{"}' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 1, delta: '2}' },
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: ' ' },
      { type: 'tool-input-start', choiceIndex: 0, toolIndex: 2, id: '', name: 'gamma' },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'tool-calls', raw: 'tool_calls' } },
    ];
    const { output } = checkGrammar(eventsOf(renderAll(parts).text));
    expect(output).toMatchObject([
      { type: 'function_call', call_id: 'call_a', name: 'alpha', arguments: '{"a":"}\\"{"}' },
      { type: 'function_call', call_id: 'call_b', name: 'beta', arguments: '{"b":2}' },
      { type: 'message', content: [{ text: ' ' }] },
      { type: 'function_call', call_id: `call_${suffix}_3`, name: 'gamma', arguments: '{}' },
    ]);
  });

  it('is read by the openai SDK as the response it describes', async () => {
    const { text } = renderAll(partsFromFixture());
    const requests: string[] = [];
    const stream = sdkStream(text, requests);
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const response = await stream.finalResponse();
    expect(requests).toEqual(['https://api.openai.com/v1/responses']);
    expect(deltas.join('')).toBe(answer);
    expect(response.id).toBe(responseId);
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe(answer);
    expect(response.output.filter((item) => item.type === 'function_call')).toMatchObject(expectedOutput.slice(2));
    expect(response.usage).toEqual(recordedUsage);
  });

  it('is read by the openai SDK as a failed response after an error part', async () => {
    const renderer = createResponsesStreamRenderer(context);
    const text =
      renderer.render({ type: 'text-delta', choiceIndex: 0, delta: 'Hel' }) +
      renderer.render({ type: 'error', error: upstreamError('upstream_timeout', 'groq', 'Timed out.') });
    const response = await sdkStream(text).finalResponse();
    expect(response.status).toBe('failed');
    expect(response.error).toEqual({ code: 'upstream_timeout', message: 'Timed out.' });
    expect(response.output_text).toBe('Hel');
  });

  it('gives the openai SDK an APIError for the stream break', async () => {
    const renderer = createResponsesStreamRenderer(context);
    const text =
      renderer.render({ type: 'text-delta', choiceIndex: 0, delta: 'Hel' }) +
      renderResponsesStreamBreak(upstreamError('upstream_stream_incomplete', 'groq', 'The stream ended early.'));
    const stream = sdkStream(text);
    await expect(stream.finalResponse()).rejects.toMatchObject({
      message: expect.stringContaining('The stream ended early.') as unknown,
      code: 'upstream_stream_incomplete',
    });
  });
});

describe('responsesOutputItemId', () => {
  it("derives item ids from the gateway's response id and the output index", () => {
    expect(responsesOutputItemId('msg', 'resp_abc', 1)).toBe('msg_abc_1');
    expect(responsesOutputItemId('fc', 'chatcmpl-9', 0)).toBe('fc_chatcmpl-9_0');
  });
});

describe('renderResponsesStreamBreak', () => {
  it('frames the error as event: error, numbered 0 unless told', () => {
    const error = new GatewayError({
      status: 503,
      type: 'api_error',
      code: 'no_deployment',
      message: 'No deployment.',
    });
    expect(renderResponsesStreamBreak(error)).toBe(
      'event: error\ndata: {"type":"error","sequence_number":0,"code":"no_deployment","message":"No deployment.","param":null}\n\n',
    );
    expect(renderResponsesStreamBreak(error, 7)).toContain('"sequence_number":7');
  });
});
