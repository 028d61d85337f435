import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { CanonicalChatResponse, CanonicalStreamPart, CanonicalToolCall } from '../../src/canonical/index.ts';
import { decodeJsonEvent, parseJson, SseDecoder } from '../../src/framing/index.ts';
import { openAICompatibleTranslator } from './openai-compatible-translator.ts';

/*
 * Golden tests: every recorded fixture through the translator, the canonical result snapshotted in
 * __snapshots__/golden/. Streams go through the real framing (SseDecoder + decodeJsonEvent) as the gateway runs it.
 * The fixtures are read with node:fs because this test runs in the Node unit project; the code under test is
 * runtime-neutral.
 */

const translator = openAICompatibleTranslator;

function fixture(name: string): Promise<string> {
  return readFile(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');
}

async function jsonFixture(name: string): Promise<unknown> {
  const parsed = parseJson(await fixture(name));
  if (!parsed.ok) throw new Error(`${name}: ${parsed.error}`);
  return parsed.value;
}

function snapshotText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Runs an SSE body through the framing and the reducer, fed in pieces of `pieceSize` characters. */
function runStream(body: string, pieceSize = body.length): CanonicalStreamPart[] {
  const decoder = new SseDecoder();
  const state = translator.chatStream.init();
  const parts: CanonicalStreamPart[] = [];
  const feed = (events: ReturnType<SseDecoder['push']>) => {
    for (const event of events) {
      const decoded = decodeJsonEvent(event, translator.id);
      if (decoded !== undefined) parts.push(...translator.chatStream.onEvent(state, decoded));
    }
  };
  for (let offset = 0; offset < body.length; offset += pieceSize)
    feed(decoder.push(body.slice(offset, offset + pieceSize)));
  feed(decoder.end());
  parts.push(...translator.chatStream.onEnd(state));
  return parts;
}

/** The view of a chat response both paths can produce (refusal, logprobs and fingerprint are not streamed). */
interface AgreedResponse {
  id: string;
  model: string;
  created: number;
  choices: { index: number; text: string; reasoning: string; toolCalls: CanonicalToolCall[]; finishReason: unknown }[];
  usage: unknown;
}

function fromResponse(response: CanonicalChatResponse): AgreedResponse {
  return {
    id: response.id,
    model: response.model,
    created: response.created,
    choices: response.choices.map((choice) => ({
      index: choice.index,
      text: choice.text ?? '',
      reasoning: choice.reasoning ?? '',
      toolCalls: choice.toolCalls,
      finishReason: choice.finishReason,
    })),
    usage: response.usage,
  };
}

/** Folds stream parts into the same view, checking the part order the seam promises on the way. */
function fromStream(parts: CanonicalStreamPart[]): AgreedResponse {
  const [start, ...rest] = parts;
  if (start?.type !== 'response-start') throw new Error('the stream must begin with response-start');
  const result: AgreedResponse = {
    id: start.id,
    model: start.model,
    created: start.created,
    choices: [],
    usage: undefined,
  };
  const choice = (index: number) => {
    let found = result.choices.find((candidate) => candidate.index === index);
    if (found === undefined) {
      found = { index, text: '', reasoning: '', toolCalls: [], finishReason: undefined };
      result.choices.push(found);
    }
    if (found.finishReason !== undefined) throw new Error(`a part for choice ${index} came after its finish`);
    return found;
  };
  for (const part of rest) {
    switch (part.type) {
      case 'text-delta':
        choice(part.choiceIndex).text += part.delta;
        break;
      case 'reasoning-delta':
        choice(part.choiceIndex).reasoning += part.delta;
        break;
      case 'tool-input-start':
        choice(part.choiceIndex).toolCalls[part.toolIndex] = { id: part.id, name: part.name, arguments: '' };
        break;
      case 'tool-input-delta': {
        const call = choice(part.choiceIndex).toolCalls[part.toolIndex];
        if (call === undefined) throw new Error('tool-input-delta before its tool-input-start');
        call.arguments += part.delta;
        break;
      }
      case 'finish':
        choice(part.choiceIndex).finishReason = part.finishReason;
        break;
      case 'usage':
        if (result.usage !== undefined) throw new Error('usage reported twice');
        result.usage = part.usage;
        break;
      default:
        throw new Error(`unexpected part ${part.type}`);
    }
  }
  return result;
}

describe('openai-compatible golden fixtures: chat', () => {
  it.each(['text', 'tools', 'reasoning'])('%s: stream and non-stream agree, snapshots hold', async (name) => {
    const response = translator.parseChatResponse(await jsonFixture(`${name}.json`));
    const body = await fixture(`${name}.chunks.txt`);
    const parts = runStream(body);

    await expect(snapshotText(response)).toMatchFileSnapshot(`./__snapshots__/golden/${name}.response.json`);
    await expect(snapshotText(parts)).toMatchFileSnapshot(`./__snapshots__/golden/${name}.stream.json`);

    expect(fromStream(parts)).toEqual(fromResponse(response));
    // Framing must not matter: the same body split into 7-character pieces gives the same parts.
    expect(runStream(body, 7)).toEqual(parts);
    expect(parts.at(-1)?.type).toBe('usage');
  });

  it('text: reads the answer and the usage', async () => {
    const response = translator.parseChatResponse(await jsonFixture('text.json'));
    expect(response.choices[0]?.text).toBe('Hello! How can I help you today?');
    expect(response.choices[0]?.finishReason).toEqual({ unified: 'stop', raw: 'stop' });
    expect(response.usage).toMatchObject({
      inputTokens: 19,
      outputTokens: 10,
      totalTokens: 29,
      cachedInputTokens: 0,
      reasoningTokens: 0,
    });
    expect(response.systemFingerprint).toBe('fp_34a54ae93c');
  });

  it('tools: reads two parallel calls with complete JSON arguments and cached prompt tokens', async () => {
    const parts = runStream(await fixture('tools.chunks.txt'));
    const calls = fromStream(parts).choices[0]?.toolCalls ?? [];
    expect(calls.map((call) => [call.id, call.name])).toEqual([
      ['call_Vq3nH8kLm2Xp9RtY4wZc7BdF', 'get_weather'],
      ['call_Jd5sK1fGh7Np3QwE9rTy2UiO', 'get_weather'],
    ]);
    expect(calls.map((call) => parseJson(call.arguments))).toEqual([
      { ok: true, value: { location: 'Paris, France', unit: 'celsius' } },
      { ok: true, value: { location: 'Tokyo, Japan', unit: 'celsius' } },
    ]);
    expect(parts.filter((part) => part.type === 'tool-input-delta').length).toBeGreaterThan(4);
    expect(parts.find((part) => part.type === 'usage')).toMatchObject({
      usage: { inputTokens: 1204, cachedInputTokens: 1024, outputTokens: 52 },
    });
  });

  it('reasoning: separates reasoning from the answer and counts reasoning and cached tokens', async () => {
    const response = translator.parseChatResponse(await jsonFixture('reasoning.json'));
    expect(response.choices[0]?.reasoning).toMatch(/^Comparing 9\.11 and 9\.9/);
    expect(response.choices[0]?.text).toMatch(/^9\.9 is larger\./);
    expect(response.usage).toMatchObject({
      inputTokens: 81,
      outputTokens: 96,
      totalTokens: 177,
      cachedInputTokens: 64,
      reasoningTokens: 71,
    });
  });
});

describe('openai-compatible golden fixtures: embeddings', () => {
  it('parses embeddings.json', async () => {
    const response = translator.parseEmbeddingsResponse?.(await jsonFixture('embeddings.json'));
    await expect(snapshotText(response)).toMatchFileSnapshot('./__snapshots__/golden/embeddings.response.json');
    expect(response?.data.map((item) => [item.index, (item.embedding as number[]).length])).toEqual([
      [0, 8],
      [1, 8],
    ]);
    expect(response?.usage).toMatchObject({ inputTokens: 8, outputTokens: 0, totalTokens: 8 });
  });
});

describe('openai-compatible golden fixtures: errors', () => {
  it.each([
    ['error-400', 400, 400, 'invalid_request_error', 'context_length_exceeded', false],
    ['error-401', 401, 502, 'upstream_error', 'upstream_authentication_failed', true],
    ['error-404', 404, 404, 'not_found_error', 'model_not_found', false],
    ['error-429', 429, 429, 'rate_limit_error', 'rate_limit_exceeded', true],
    ['error-429-insufficient-quota', 429, 429, 'insufficient_quota', 'insufficient_quota', true],
    ['error-500', 500, 502, 'upstream_error', null, true],
    ['error-503', 503, 503, 'upstream_error', null, true],
  ] as const)('%s maps to %i/%i %s', async (name, upstreamStatus, status, type, code, retryable) => {
    const body = await jsonFixture(`${name}.json`);
    const headers = new Headers(upstreamStatus === 429 ? { 'retry-after': '1' } : {});
    const error = translator.mapError(upstreamStatus, body, headers);
    expect(error).toMatchObject({ status, type, code, retryable, provider: 'openai-compatible', upstreamBody: body });
    const { message, param, headers: responseHeaders } = error;
    await expect(
      snapshotText({ status, type, code, param, retryable, message, headers: responseHeaders }),
    ).toMatchFileSnapshot(`./__snapshots__/golden/${name}.error.json`);
  });
});
