import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CanonicalChatResponse, CanonicalStreamPart, CanonicalToolCall } from '../../src/canonical/index.ts';
import { decodeJsonEvent, parseJson, SseDecoder } from '../../src/framing/index.ts';
import { anthropicTranslator } from './anthropic-translator.ts';

/**
 * Golden tests over the recorded fixtures in `__fixtures__/`: each success case is read as a non-streamed response
 * (`<case>.json`) and as a stream (`<case>.chunks.txt`, through the gateway's own SSE decoder), both are compared with
 * their snapshot in `__snapshots__/`, and the two readings must agree on text, reasoning, tool calls, finish and usage.
 * Each error fixture is mapped as the HTTP status in its name.
 */

const fixtures = new URL('./__fixtures__/', import.meta.url);
const readFixture = (name: string): string => readFileSync(new URL(name, fixtures), 'utf8');
const readJsonFixture = (name: string): unknown => {
  const parsed = parseJson(readFixture(name));
  if (!parsed.ok) throw new Error(`${name}: ${parsed.error}`);
  return parsed.value;
};
const snapshot = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** Feeds SSE text to the decoder in pieces of `pieceLength` characters (all at once when undefined), then reduces. */
function reduceStream(text: string, pieceLength?: number): CanonicalStreamPart[] {
  const decoder = new SseDecoder();
  const reducer = anthropicTranslator.chatStream;
  const state: unknown = reducer.init();
  const parts: CanonicalStreamPart[] = [];
  const feed = (events: ReturnType<SseDecoder['push']>) => {
    for (const event of events) {
      const decoded = decodeJsonEvent(event, 'anthropic');
      if (decoded !== undefined) parts.push(...reducer.onEvent(state, decoded));
    }
  };
  const step = pieceLength ?? text.length;
  for (let offset = 0; offset < text.length; offset += step) feed(decoder.push(text.slice(offset, offset + step)));
  feed(decoder.end());
  parts.push(...reducer.onEnd(state));
  return parts;
}

/** What a client ends up with, from either reading. */
interface Outcome {
  id: string | undefined;
  model: string | undefined;
  text: string | null;
  reasoning: string | undefined;
  reasoningSignature: string | undefined;
  toolCalls: CanonicalToolCall[];
  finishReason: unknown;
  usage: unknown;
}

function outcomeOfResponse(response: CanonicalChatResponse): Outcome {
  const [choice] = response.choices;
  if (choice === undefined) throw new Error('no choice');
  return {
    id: response.id,
    model: response.model,
    text: choice.text,
    reasoning: choice.reasoning,
    reasoningSignature: choice.reasoningSignature,
    toolCalls: choice.toolCalls,
    finishReason: choice.finishReason,
    usage: response.usage,
  };
}

function outcomeOfStream(parts: CanonicalStreamPart[]): Outcome {
  const outcome: Outcome = {
    id: undefined,
    model: undefined,
    text: null,
    reasoning: undefined,
    reasoningSignature: undefined,
    toolCalls: [],
    finishReason: undefined,
    usage: undefined,
  };
  let usageParts = 0;
  for (const part of parts) {
    switch (part.type) {
      case 'response-start':
        outcome.id = part.id;
        outcome.model = part.model;
        break;
      case 'text-delta':
        outcome.text = (outcome.text ?? '') + part.delta;
        break;
      case 'reasoning-delta':
        outcome.reasoning = (outcome.reasoning ?? '') + part.delta;
        break;
      case 'tool-input-start':
        outcome.toolCalls[part.toolIndex] = { id: part.id, name: part.name, arguments: '' };
        break;
      case 'tool-input-delta': {
        const call = outcome.toolCalls[part.toolIndex];
        if (call === undefined) throw new Error(`tool-input-delta before tool-input-start for tool ${part.toolIndex}`);
        call.arguments += part.delta;
        break;
      }
      case 'finish':
        outcome.finishReason = part.finishReason;
        break;
      case 'reasoning-end':
        if (part.signature !== undefined) outcome.reasoningSignature = part.signature;
        break;
      case 'usage':
        // message_start's prompt tokens first, the cumulative total at message_stop: the latest wins.
        if (++usageParts > 2) throw new Error('usage reported more than twice');
        outcome.usage = part.usage;
        break;
      case 'error':
        throw part.error;
    }
  }
  return outcome;
}

/** JSON text compared by value: a stream's partial JSON keeps Anthropic's spacing, the response is re-serialised. */
function jsonValue(text: string | null): unknown {
  if (text === null) return null;
  const parsed = parseJson(text);
  if (!parsed.ok) throw new Error(`not JSON: ${text}`);
  return parsed.value;
}

beforeAll(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2025-10-01T12:00:00Z'));
});
afterAll(() => {
  vi.useRealTimers();
});

describe.each(['text', 'tools', 'thinking', 'json-response'])('fixture %s', (fixture) => {
  // Read inside each test, after the clock is frozen, so `created` is stable in the snapshots.
  const readResponse = () => anthropicTranslator.parseChatResponse(readJsonFixture(`${fixture}.json`));
  const readParts = () => reduceStream(readFixture(`${fixture}.chunks.txt`));

  it('reads the non-streamed response as its snapshot', async () => {
    const response = readResponse();
    await expect(snapshot(response)).toMatchFileSnapshot(`./__snapshots__/${fixture}.json.snap.json`);
  });

  it('reduces the stream to its snapshot, however the bytes are split', async () => {
    const parts = readParts();
    await expect(snapshot(parts)).toMatchFileSnapshot(`./__snapshots__/${fixture}.stream.snap.json`);
    for (const pieceLength of [1, 7, 64])
      expect(reduceStream(readFixture(`${fixture}.chunks.txt`), pieceLength)).toEqual(parts);
  });

  it('gives the same answer streamed and not streamed', () => {
    const streamed = outcomeOfStream(readParts());
    const whole = outcomeOfResponse(readResponse());
    const textIsJson = fixture === 'json-response';
    expect({ ...streamed, text: textIsJson ? jsonValue(streamed.text) : streamed.text, toolCalls: undefined }).toEqual({
      ...whole,
      text: textIsJson ? jsonValue(whole.text) : whole.text,
      toolCalls: undefined,
    });
    expect(streamed.toolCalls.map((call) => ({ ...call, arguments: jsonValue(call.arguments) }))).toEqual(
      whole.toolCalls.map((call) => ({ ...call, arguments: jsonValue(call.arguments) })),
    );
  });
});

describe('fixture values', () => {
  it('text: cache reads count as input tokens', () => {
    const response = anthropicTranslator.parseChatResponse(readJsonFixture('text.json'));
    expect(response.choices[0]?.text).toBe(
      "Hello! I'm Claude, an AI assistant made by Anthropic. How can I help you today?",
    );
    expect(response.usage).toMatchObject({
      inputTokens: 21 + 1834,
      outputTokens: 24,
      totalTokens: 1879,
      cachedInputTokens: 1834,
      cacheWriteInputTokens: 0,
    });
  });

  it('tools: two calls, tool indexes 0 and 1 though they are content blocks 1 and 2', () => {
    const parts = reduceStream(readFixture('tools.chunks.txt'));
    const starts = parts.filter((part) => part.type === 'tool-input-start');
    expect(starts).toEqual([
      {
        type: 'tool-input-start',
        choiceIndex: 0,
        toolIndex: 0,
        id: 'toolu_01A09q90qw90lq917835lq9',
        name: 'get_weather',
      },
      {
        type: 'tool-input-start',
        choiceIndex: 0,
        toolIndex: 1,
        id: 'toolu_01Wv8Vfz9Xk3mTqHr2sLbN4p',
        name: 'get_weather',
      },
    ]);
    const response = anthropicTranslator.parseChatResponse(readJsonFixture('tools.json'));
    expect(response.choices[0]?.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_use' });
    expect(response.usage).toMatchObject({
      inputTokens: 389 + 1502,
      cacheWriteInputTokens: 1502,
      cachedInputTokens: 0,
    });
  });

  it('thinking: reasoning apart from the text', () => {
    const [choice] = anthropicTranslator.parseChatResponse(readJsonFixture('thinking.json')).choices;
    expect(choice?.reasoning).toBe('The user wants 27 * 453. 27 * 453 = 27 * 400 + 27 * 53 = 10800 + 1431 = 12231.');
    expect(choice?.text).toBe('27 × 453 = 12,231');
  });

  it('json-response: the forced JSON tool is the answer text', () => {
    const [choice] = anthropicTranslator.parseChatResponse(readJsonFixture('json-response.json')).choices;
    expect(jsonValue(choice?.text ?? null)).toEqual({ city: 'Paris', country: 'France', population: 2102650 });
    expect(choice?.toolCalls).toEqual([]);
    expect(choice?.finishReason).toEqual({ unified: 'stop', raw: 'tool_use' });
  });
});

describe.each([
  ['error-400', 400, 400, 'invalid_request_error'],
  ['error-401', 401, 502, 'upstream_error'],
  ['error-404', 404, 502, 'upstream_error'],
  ['error-429', 429, 429, 'rate_limit_error'],
  ['error-500', 500, 502, 'upstream_error'],
  ['error-529', 529, 503, 'upstream_error'],
])('fixture %s', (fixture, upstreamStatus, status, type) => {
  it(`maps HTTP ${upstreamStatus} to ${status} ${type}, keeping the message`, async () => {
    const body = readJsonFixture(`${fixture}.json`) as { error: { message: string } };
    const error = anthropicTranslator.mapError(upstreamStatus, body, new Headers({ 'retry-after': '30' }));
    expect(error).toMatchObject({ status, type, message: body.error.message, upstreamBody: body });
    const { code, param, retryable, headers, provider } = error;
    await expect(
      snapshot({ status, type, code, param, retryable, headers, provider, message: error.message }),
    ).toMatchFileSnapshot(`./__snapshots__/${fixture}.snap.json`);
  });
});
