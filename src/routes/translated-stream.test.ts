import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// eslint-disable-next-line no-restricted-imports -- drives the route stream with a real translator and its fixture
import { anthropicTranslator } from '../../providers/anthropic/index.ts';
import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import { createOpenAIChatStreamRenderer } from '../dialects/openai-chat/openai-chat-render-stream.ts';
import { awsFrame } from '../framing/aws-event-stream.test-helper.ts';
import { concatenateChunks } from '../framing/concatenate-chunks.ts';
import { SseDecoder } from '../framing/sse-decoder.ts';
import { openStreamEventDecoder } from '../framing/stream-event-decoder.ts';
import { createTranslatedStream } from './translated-stream.ts';

const fixture = readFileSync(
  new URL('../../providers/anthropic/__fixtures__/text.chunks.txt', import.meta.url),
  'utf8',
);
const fixtureText = "Hello! I'm Claude, an AI assistant made by Anthropic. How can I help you today?";
const textEncoder = new TextEncoder();

interface Translated {
  /** The `data:` payloads, JSON-parsed except `[DONE]`. */
  events: unknown[];
  raw: string;
  ends: (CanonicalUsage | undefined)[];
}

async function translate(
  upstream: string | Uint8Array,
  includeUsage: boolean,
  chunkSize = 41,
  framing: 'sse' | 'aws-event-stream' = 'sse',
): Promise<Translated> {
  const bytes = typeof upstream === 'string' ? textEncoder.encode(upstream) : upstream;
  const ends: (CanonicalUsage | undefined)[] = [];
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let start = 0; start < bytes.length; start += chunkSize)
        controller.enqueue(bytes.slice(start, start + chunkSize));
      controller.close();
    },
  });
  const stream = source.pipeThrough(
    createTranslatedStream({
      reducer: anthropicTranslator.chatStream,
      renderer: createOpenAIChatStreamRenderer(includeUsage, 'claude-sonnet-4-5'),
      providerName: 'anthropic',
      decoder: await openStreamEventDecoder(framing, 'anthropic'),
      onEnd: (usage) => ends.push(usage),
    }),
  );
  const raw = await new Response(stream).text();
  const blocks = raw.split('\n\n');
  expect(blocks.pop()).toBe('');
  const events = blocks.map((block) => {
    expect(block.startsWith('data: ')).toBe(true);
    const data = block.slice('data: '.length);
    return data === '[DONE]' ? data : (JSON.parse(data) as unknown);
  });
  return { events, raw, ends };
}

type Chunk = {
  id: string;
  object: string;
  model: string;
  choices: { index: number; delta: Record<string, unknown>; finish_reason: string | null }[];
  usage?: Record<string, unknown> | null;
};

const chunks = (events: unknown[]) =>
  events.filter((event): event is Chunk => typeof event === 'object' && event !== null && 'choices' in event);
const contentOf = (events: unknown[]) =>
  chunks(events)
    .flatMap((chunk) => chunk.choices.map((choice) => choice.delta.content ?? ''))
    .join('');

describe('createTranslatedStream with the Anthropic translator and the OpenAI chat renderer', () => {
  it('renders OpenAI chunks whose content joins to the fixture text and ends with [DONE]', async () => {
    const { events, raw } = await translate(fixture, false);
    expect(contentOf(events)).toBe(fixtureText);
    expect(events.at(-1)).toBe('[DONE]');
    expect(raw.endsWith('data: [DONE]\n\n')).toBe(true);
    for (const chunk of chunks(events)) {
      expect(chunk).toMatchObject({
        id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
        object: 'chat.completion.chunk',
        model: 'claude-sonnet-4-5-20250929',
      });
    }
    const [first] = chunks(events);
    expect(first?.choices[0]?.delta).toEqual({ role: 'assistant', content: "Hello! I'm Claude" });
    expect(chunks(events).at(-1)?.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
  });

  it('sends no usage when the client did not ask, but reports it to onEnd once', async () => {
    const { events, ends } = await translate(fixture, false);
    for (const chunk of chunks(events)) expect('usage' in chunk).toBe(false);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({
      inputTokens: 21 + 1834,
      outputTokens: 24,
      totalTokens: 21 + 1834 + 24,
      cachedInputTokens: 1834,
    });
  });

  it('sends a final usage chunk before [DONE] when the client asked for it', async () => {
    const { events, ends } = await translate(fixture, true);
    const all = chunks(events);
    const usageChunk = all.at(-1);
    expect(events.at(-1)).toBe('[DONE]');
    expect(usageChunk?.choices).toEqual([]);
    expect(usageChunk?.usage).toEqual({
      prompt_tokens: 1855,
      completion_tokens: 24,
      total_tokens: 1879,
      prompt_tokens_details: { cached_tokens: 1834 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    for (const chunk of all.slice(0, -1)) expect(chunk.usage).toBeNull();
    expect(contentOf(events)).toBe(fixtureText);
    expect(ends).toHaveLength(1);
  });

  it('gives the same chunks fed one byte at a time', async () => {
    const whole = await translate(fixture, true, fixture.length);
    const byByte = await translate(fixture, true, 1);
    const withoutCreated = (events: unknown[]) =>
      events.map((event) => (typeof event === 'object' ? { ...(event as object), created: 0 } : event));
    expect(withoutCreated(byByte.events)).toEqual(withoutCreated(whole.events));
  });

  it('turns an Anthropic error event mid-stream into an OpenAI error event and ends', async () => {
    const blocks = fixture.split('\n\n');
    const cut = blocks.findIndex((block) => block.includes('", an AI assistant'));
    const upstream = [
      ...blocks.slice(0, cut),
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
      ...blocks.slice(cut),
    ].join('\n\n');
    const { events, ends } = await translate(upstream, false, upstream.length);
    expect(contentOf(events)).toBe("Hello! I'm Claude");
    expect(events.at(-1)).toEqual({
      error: {
        message: expect.stringContaining('Overloaded') as unknown,
        type: 'upstream_error',
        param: null,
        code: 'upstream_overloaded',
      },
    });
    expect(events).not.toContain('[DONE]');
    expect(ends).toHaveLength(1);
  });

  it('ends at message_stop without waiting for the upstream to close, and renders nothing the upstream adds', async () => {
    const ends: (CanonicalUsage | undefined)[] = [];
    let upstreamCancelled: () => void = () => undefined;
    const whenUpstreamCancelled = new Promise<void>((resolve) => (upstreamCancelled = resolve));
    // The whole answer, then an event after message_stop, then the upstream holds its connection open.
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(textEncoder.encode(`${fixture}event: ping\ndata: {"type":"ping"}\n\n`));
      },
      cancel() {
        upstreamCancelled();
      },
    });
    const raw = await new Response(
      source.pipeThrough(
        createTranslatedStream({
          reducer: anthropicTranslator.chatStream,
          renderer: createOpenAIChatStreamRenderer(false, 'claude-sonnet-4-5'),
          providerName: 'anthropic',
          onEnd: (usage) => ends.push(usage),
        }),
      ),
    ).text();
    expect(raw.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(raw.match(/\[DONE\]/g)).toHaveLength(1);
    expect(
      contentOf(
        raw
          .split('\n\n')
          .filter((block) => block.startsWith('data: {'))
          .map((block) => JSON.parse(block.slice(6)) as unknown),
      ),
    ).toBe(fixtureText);
    expect(ends).toHaveLength(1);
    expect(ends[0]?.outputTokens).toBeGreaterThan(0);
    // The pipe lets go of the upstream (in the gateway, transformBody releases it: see its tests).
    await whenUpstreamCancelled;
  });

  it('reports a stream cut off before the message finished as an error event', async () => {
    const blocks = fixture.split('\n\n');
    const cut = blocks.findIndex((block) => block.startsWith('event: message_delta'));
    const { events } = await translate(blocks.slice(0, cut).join('\n\n'), false);
    const errors = events.filter((event) => typeof event === 'object' && event !== null && 'error' in event);
    expect(errors).toEqual([
      { error: expect.objectContaining({ type: 'upstream_error', code: 'upstream_stream_incomplete' }) as unknown },
    ]);
  });

  it('turns a non-JSON upstream event into a 502 upstream_invalid_stream error event', async () => {
    const { events, ends } = await translate('event: message_start\ndata: {not json\n\n', false);
    expect(events).toEqual([
      { error: expect.objectContaining({ type: 'upstream_error', code: 'upstream_invalid_stream' }) as unknown },
    ]);
    expect(ends).toEqual([undefined]);
  });
});

/** The fixture's events framed as the AWS binary event stream (Claude's events as a Bedrock stream carries them). */
function awsFramed(extra: Uint8Array[] = [], cutBefore?: string): Uint8Array {
  const frames: Uint8Array[] = [];
  for (const event of new SseDecoder().push(fixture)) {
    if (cutBefore !== undefined && event.event === cutBefore) frames.push(...extra);
    frames.push(awsFrame('event', event.event ?? 'message', event.data));
  }
  return concatenateChunks(frames);
}

describe('createTranslatedStream over the AWS event stream (the framing a translator declares)', () => {
  const withoutCreated = (events: unknown[]) =>
    events.map((event) => (typeof event === 'object' ? { ...(event as object), created: 0 } : event));

  it('gives the same client chunks as the same events over SSE, however the bytes are cut', async () => {
    const overSse = await translate(fixture, true, fixture.length);
    const framed = awsFramed();
    for (const chunkSize of [framed.length, 7, 1]) {
      const overAws = await translate(framed, true, chunkSize, 'aws-event-stream');
      expect(withoutCreated(overAws.events)).toEqual(withoutCreated(overSse.events));
      expect(overAws.ends).toEqual(overSse.ends);
    }
  });

  it("ends with the client's error event when the upstream sends an exception mid-stream", async () => {
    const throttled = awsFrame(
      'exception',
      'throttlingException',
      '{"message":"Too many tokens, please wait before trying again."}',
    );
    const { events, ends } = await translate(awsFramed([throttled], 'message_delta'), false, 64, 'aws-event-stream');
    expect(events.at(-1)).toEqual({
      error: expect.objectContaining({ message: expect.stringContaining('throttlingException') as unknown }) as unknown,
    });
    expect(events).not.toContain('[DONE]');
    expect(ends).toHaveLength(1);
  });
});
