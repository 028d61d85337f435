import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type {
  CanonicalChatResponse,
  CanonicalStreamPart,
  CanonicalToolCall,
  ProviderTranslator,
} from '../../src/canonical/index.ts';
import type { ClientDialect, StreamRenderer } from '../../src/dialects/dialect.ts';
import { anthropicMessagesDialect } from '../../src/dialects/anthropic-messages/anthropic-messages-dialect.ts';
import { openAIChatDialect } from '../../src/dialects/openai-chat/openai-chat-dialect.ts';
import { renderOpenAIEmbeddingsResponse } from '../../src/dialects/openai-embeddings/openai-embeddings-convert.ts';
import { openAIResponsesDialect } from '../../src/dialects/openai-responses/openai-responses-dialect.ts';
import type { GatewayErrorType } from '../../src/errors.ts';
import { isGatewayError } from '../../src/errors.ts';
import { awsFrame } from '../../src/framing/aws-event-stream.test-helper.ts';
import { parseJson } from '../../src/framing/index.ts';
import { createAwsEventDecoder } from '../../src/framing/aws-stream-event-decoder.ts';
import { createSseEventDecoder } from '../../src/framing/stream-event-decoder.ts';

/** One recorded error answer and what the client must see for it. */
export interface ProviderErrorCase {
  /** `__fixtures__/<fixture>.json`, the upstream's error body (read as text when it is not JSON). */
  fixture: string;
  upstreamStatus: number;
  /** Upstream response headers that come with it (`x-amzn-errortype`, `retry-after`). */
  headers?: Record<string, string>;
  status: number;
  type: GatewayErrorType;
  /** The client-facing code, when the case pins one. */
  code?: string | null;
  retryable: boolean;
}

/**
 * Reads a translator's recorded fixtures, for the value checks its golden test makes beside {@link testProvider}.
 *
 * @example
 * const { text: readFixture, json: readJsonFixture } = fixtureReader(new URL('./__fixtures__/', import.meta.url));
 */
export function fixtureReader(fixtures: URL): { text(name: string): string; json(name: string): unknown } {
  const text = (name: string): string => readFileSync(new URL(name, fixtures), 'utf8');
  return {
    text,
    json(name) {
      const parsed = parseJson(text(name));
      if (!parsed.ok) throw new Error(`${name}: ${parsed.error}`);
      return parsed.value;
    },
  };
}

/** What {@link testProvider} checks for one translator. */
export interface ProviderSuiteOptions {
  translator: ProviderTranslator;
  /** The translator's `__fixtures__/` folder. */
  fixtures: URL;
  /** Where the snapshots go (one folder per translator, e.g. `__snapshots__/suite/`). */
  snapshots: URL;
  /**
   * Chat cases: each has `<case>.json` (the non-streamed body) and its stream, `<case>.chunks.txt` (the raw SSE body)
   * or, for an AWS event-stream translator, `<case>.events.json` (`[{eventType, payload}]`, framed here as the binary
   * messages the upstream sends). Both must describe the same answer.
   */
  chat: readonly string[];
  /** Chat cases whose answer text is JSON, compared by value (a stream keeps the upstream's spacing). */
  jsonText?: readonly string[];
  /** Embeddings cases: `<case>.json`, read by `parseEmbeddingsResponse`. */
  embeddings?: readonly string[];
  errors: readonly ProviderErrorCase[];
  /** The upstream model named in requests; a stream's fallback model. */
  model?: string;
}

/** The client APIs each answer is rendered in. */
const clientApis = [
  { name: 'chat-completions', dialect: openAIChatDialect as ClientDialect<unknown, unknown, CanonicalChatResponse> },
  { name: 'messages', dialect: anthropicMessagesDialect as ClientDialect<unknown, unknown, CanonicalChatResponse> },
  { name: 'responses', dialect: openAIResponsesDialect as ClientDialect<unknown, unknown, CanonicalChatResponse> },
] as const;

/** What a client ends up with, from either reading: the parts a stream and a whole answer must agree on. */
interface Outcome {
  id: string | undefined;
  model: string | undefined;
  choices: {
    text: string | null;
    reasoning: string | null;
    reasoningSignature: string | null;
    toolCalls: CanonicalToolCall[];
    finishReason: unknown;
  }[];
  usage: unknown;
}

/**
 * The conformance suite of the provider seam: every translator's golden test calls it with its recorded fixtures.
 * For each chat case it checks that the non-streamed body and the stream each read as their snapshot; that any
 * chunking of the stream's bytes (1, 7 and 64 bytes at a time) gives the same parts; that the stream and the whole
 * answer agree on text, reasoning, tool calls, finish and usage; and it snapshots what each client API (chat
 * completions, messages, responses) renders from both. Each error fixture must map to its stated status, type and
 * retryability, keeping the upstream's message; each embeddings fixture reads as its snapshot.
 *
 * @example
 * testProvider({
 *   translator: geminiTranslator,
 *   fixtures: new URL('./__fixtures__/', import.meta.url),
 *   snapshots: new URL('./__snapshots__/suite/', import.meta.url),
 *   chat: ['text', 'tools'],
 *   errors: [{ fixture: 'error-429', upstreamStatus: 429, status: 429, type: 'rate_limit_error', retryable: true }],
 * });
 */
export function testProvider(options: ProviderSuiteOptions): void {
  const { translator } = options;
  const model = options.model ?? 'fixture-model';
  const readText = (name: string): string => readFileSync(new URL(name, options.fixtures), 'utf8');
  const readJson = (name: string): unknown => {
    const parsed = parseJson(readText(name));
    if (!parsed.ok) throw new Error(`${name}: ${parsed.error}`);
    return parsed.value;
  };
  const snapshotPath = (name: string): string => new URL(name, options.snapshots).pathname;

  /** The stream's bytes exactly as the upstream sends them. */
  const streamBytes = (name: string): Uint8Array => {
    if (translator.streamFraming === 'sse') return new TextEncoder().encode(readText(`${name}.chunks.txt`));
    const events = readJson(`${name}.events.json`) as {
      eventType?: string;
      exceptionType?: string;
      payload: unknown;
    }[];
    return concatenate(
      events.map((event) =>
        event.exceptionType === undefined
          ? awsFrame('event', event.eventType ?? '', JSON.stringify(event.payload))
          : awsFrame('exception', event.exceptionType, JSON.stringify(event.payload)),
      ),
    );
  };

  const reduce = (bytes: Uint8Array, pieceLength?: number) => reduceProviderStream(translator, bytes, pieceLength);

  beforeAll(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2025-10-01T12:00:00Z'));
  });
  afterAll(() => {
    vi.useRealTimers();
  });

  describe.each(options.chat)(`${translator.id} chat fixture %s`, (name) => {
    const textIsJson = options.jsonText?.includes(name) === true;
    // Read inside each test, after the clock is frozen, so generated timestamps are stable in the snapshots.
    const readResponse = () => translator.parseChatResponse(readJson(`${name}.json`));
    const readParts = () => reduce(streamBytes(name));

    it('reads the non-streamed body as its snapshot', async () => {
      await expect(snapshot(readResponse())).toMatchFileSnapshot(snapshotPath(`${name}.response.json`));
    });

    it('reduces the stream to its snapshot, however its bytes are split', async () => {
      const parts = readParts();
      expect(parts.filter((part) => part.type === 'error')).toEqual([]);
      await expect(snapshot(parts)).toMatchFileSnapshot(snapshotPath(`${name}.stream.json`));
      const bytes = streamBytes(name);
      for (const pieceLength of [1, 7, 64]) expect(reduce(bytes, pieceLength)).toEqual(parts);
    });

    it('gives the same answer streamed and not streamed', () => {
      const streamed = comparable(outcomeOfStream(readParts()), textIsJson);
      const whole = comparable(outcomeOfResponse(readResponse()), textIsJson);
      expect(streamed).toEqual(whole);
    });

    it.each(clientApis)(
      'renders for $name clients, whole and streamed, as its snapshots',
      async ({ name: api, dialect }) => {
        // As the pipeline does (chatOperation.parseAnswer): an answer that names no model names the deployment's.
        const response = readResponse();
        const named = response.model === '' ? { ...response, model } : response;
        const whole = dialect.renderResponse?.(named, clientRequest(dialect, model, false));
        if (whole === undefined) throw new Error(`${dialect.id} renders no response`);
        const parsedWhole = parseJson(whole);
        if (!parsedWhole.ok) throw new Error(`${dialect.id} rendered no JSON: ${whole}`);
        await expect(snapshot(parsedWhole.value)).toMatchFileSnapshot(snapshotPath(`${name}.${api}.json`));

        const renderer: StreamRenderer | undefined = dialect.createStreamRenderer?.(
          clientRequest(dialect, model, true),
          {
            fallbackModel: model,
            estimatedInputTokens: 10,
          },
        );
        if (renderer === undefined) throw new Error(`${dialect.id} renders no stream`);
        const framed =
          readParts()
            .map((part) => renderer.render(part))
            .join('') + renderer.end();
        await expect(framed).toMatchFileSnapshot(snapshotPath(`${name}.${api}.stream.txt`));
      },
    );
  });

  if (options.embeddings !== undefined && options.embeddings.length > 0) {
    describe.each(options.embeddings)(`${translator.id} embeddings fixture %s`, (name) => {
      it('reads as its snapshot and renders for OpenAI clients', async () => {
        const parse = translator.parseEmbeddingsResponse;
        if (parse === undefined)
          throw new Error(`${translator.id} has embeddings fixtures but no parseEmbeddingsResponse`);
        const response = parse(readJson(`${name}.json`));
        expect(response.data.length).toBeGreaterThan(0);
        await expect(snapshot(response)).toMatchFileSnapshot(snapshotPath(`${name}.embeddings.json`));
        await expect(snapshot(renderOpenAIEmbeddingsResponse(response))).toMatchFileSnapshot(
          snapshotPath(`${name}.embeddings.openai.json`),
        );
      });
    });
  }

  describe.each(options.errors)(`${translator.id} error fixture $fixture`, (errorCase) => {
    it(`maps HTTP ${errorCase.upstreamStatus} as ${errorCase.status} ${errorCase.type}, keeping the upstream's message`, async () => {
      const text = readText(`${errorCase.fixture}.json`);
      const parsed = parseJson(text);
      const body = parsed.ok ? parsed.value : text;
      const error = translator.mapError(errorCase.upstreamStatus, body, new Headers(errorCase.headers ?? {}));
      expect(isGatewayError(error)).toBe(true);
      expect(error).toMatchObject({
        status: errorCase.status,
        type: errorCase.type,
        retryable: errorCase.retryable,
        upstreamBody: body,
        ...(errorCase.code === undefined ? {} : { code: errorCase.code }),
      });
      expect(error.message.length).toBeGreaterThan(0);
      // The start of the upstream's message survives (echoed credentials later in it may be redacted).
      for (const quoted of upstreamMessages(body)) expect(error.message).toContain(quoted.slice(0, 24));
      const { status, type, code, param, retryable, headers, provider, message } = error;
      await expect(snapshot({ status, type, code, param, retryable, headers, provider, message })).toMatchFileSnapshot(
        snapshotPath(`${errorCase.fixture}.error.json`),
      );
    });
  });
}

/**
 * Runs a stream's bytes, in `pieceLength`-byte pieces, through the shared framing the translator declares and its
 * reducer, as the gateway does: the framing's end sentinel is reported to `onEnd`, and a reducer that says it is
 * complete ends the stream there.
 *
 * @example
 * const parts = reduceProviderStream(anthropicTranslator, new TextEncoder().encode(sseText), 7);
 */
export function reduceProviderStream(
  translator: ProviderTranslator,
  bytes: Uint8Array,
  pieceLength = bytes.length,
): CanonicalStreamPart[] {
  const step = Math.max(1, pieceLength);
  // The same decoders openStreamEventDecoder opens, taken synchronously (the AWS one is loaded lazily there).
  const decoder =
    translator.streamFraming === 'sse' ? createSseEventDecoder(translator.id) : createAwsEventDecoder(translator.id);
  const reducer = translator.chatStream;
  const state: unknown = reducer.init();
  const parts: CanonicalStreamPart[] = [];
  let sentinel = false;
  let complete = false;
  const feed = (items: ReturnType<typeof decoder.push>) => {
    for (const item of items) {
      if (complete) return;
      if (item === 'end') {
        sentinel = true;
        continue;
      }
      parts.push(...reducer.onEvent(state, item));
      if (reducer.isComplete?.(state) === true) complete = true;
    }
  };
  for (let offset = 0; offset < bytes.length && !complete; offset += step)
    feed(decoder.push(bytes.subarray(offset, offset + step)));
  if (!complete) feed(decoder.end());
  parts.push(...reducer.onEnd(state, { sentinel }));
  return parts;
}

function snapshot(value: unknown): string {
  return `${JSON.stringify(value, (_key, item: unknown) => (isGatewayError(item) ? errorView(item) : item), 2)}\n`;
}

function errorView(error: { status: number; type: string; code: string | null; message: string }) {
  return { status: error.status, type: error.type, code: error.code, message: error.message };
}

function concatenate(chunks: Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.length;
  }
  return joined;
}

/** The request a client of `dialect` sends, parsed by the dialect itself; ids that are random are fixed. */
function clientRequest(
  dialect: ClientDialect<unknown, unknown, CanonicalChatResponse>,
  model: string,
  stream: boolean,
) {
  const body: Record<string, unknown> =
    dialect.id === 'openai-responses'
      ? { model, input: 'Hello', stream }
      : dialect.id === 'anthropic-messages'
        ? { model, max_tokens: 1024, messages: [{ role: 'user', content: 'Hello' }], stream }
        : {
            model,
            messages: [{ role: 'user', content: 'Hello' }],
            stream,
            ...(stream ? { stream_options: { include_usage: true } } : {}),
          };
  const request = dialect.parseRequest(body);
  if (dialect.id === 'openai-responses') (request as { id: string }).id = 'resp_fixture';
  return request;
}

/** The upstream's own message texts in an error body (`error.message`, `message`, `Message`), which must be kept. */
function upstreamMessages(body: unknown): string[] {
  if (typeof body === 'string') return body.trim().length > 0 && !body.trimStart().startsWith('<') ? [body.trim()] : [];
  if (typeof body !== 'object' || body === null) return [];
  const record = body as Record<string, unknown>;
  const nested =
    typeof record.error === 'object' && record.error !== null ? (record.error as Record<string, unknown>) : {};
  return [nested.message, record.message, record.Message].filter(
    (value): value is string => typeof value === 'string' && value.length > 0,
  );
}

function outcomeOfResponse(response: CanonicalChatResponse): Outcome {
  return {
    id: response.id,
    model: response.model,
    choices: response.choices.map((choice) => ({
      text: choice.text,
      reasoning: choice.reasoning ?? null,
      reasoningSignature: choice.reasoningSignature ?? null,
      toolCalls: choice.toolCalls,
      finishReason: choice.finishReason,
    })),
    usage: response.usage,
  };
}

/** Folds stream parts into an outcome, checking on the way the part order the seam promises. */
function outcomeOfStream(parts: CanonicalStreamPart[]): Outcome {
  const [start, ...rest] = parts;
  if (start?.type !== 'response-start') throw new Error('a stream must begin with response-start');
  const outcome: Outcome = { id: start.id, model: start.model, choices: [], usage: undefined };
  const finished = new Set<number>();
  const choice = (index: number) => {
    if (finished.has(index)) throw new Error(`a part for choice ${index} came after its finish`);
    outcome.choices[index] ??= {
      text: null,
      reasoning: null,
      reasoningSignature: null,
      toolCalls: [],
      finishReason: undefined,
    };
    return outcome.choices[index];
  };
  for (const part of rest) {
    switch (part.type) {
      case 'response-start':
        throw new Error('response-start came twice');
      case 'text-delta': {
        const target = choice(part.choiceIndex);
        target.text = (target.text ?? '') + part.delta;
        break;
      }
      case 'reasoning-delta': {
        const target = choice(part.choiceIndex);
        target.reasoning = (target.reasoning ?? '') + part.delta;
        break;
      }
      case 'reasoning-end':
        if (part.signature !== undefined) choice(part.choiceIndex).reasoningSignature = part.signature;
        break;
      case 'tool-input-start':
        choice(part.choiceIndex).toolCalls[part.toolIndex] = { id: part.id, name: part.name, arguments: '' };
        break;
      case 'tool-input-delta': {
        const call = choice(part.choiceIndex).toolCalls[part.toolIndex];
        if (call === undefined) throw new Error(`tool-input-delta before tool-input-start for tool ${part.toolIndex}`);
        call.arguments += part.delta;
        break;
      }
      case 'finish':
        choice(part.choiceIndex).finishReason = part.finishReason;
        finished.add(part.choiceIndex);
        break;
      case 'usage':
        // Usage is cumulative: the latest wins.
        outcome.usage = part.usage;
        break;
      case 'error':
        throw part.error;
      default:
        break;
    }
  }
  return outcome;
}

/** An outcome with JSON texts (tool arguments always, the answer text when `textIsJson`) compared by value. */
function comparable(outcome: Outcome, textIsJson: boolean): unknown {
  const value = (text: string | null): unknown => {
    if (text === null || text === '') return text;
    const parsed = parseJson(text);
    return parsed.ok ? parsed.value : text;
  };
  return {
    ...outcome,
    choices: outcome.choices.map((choice) => ({
      ...choice,
      text: textIsJson ? value(choice.text) : choice.text === '' ? null : choice.text,
      toolCalls: choice.toolCalls.map((call) => ({ ...call, arguments: value(call.arguments) })),
    })),
  };
}
