import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';
import { createSecretRedactor } from '../../security/secret-redactor.ts';
import { createOpenAIPassthroughStream, createOpenAIPassthroughTransformer } from './openai-chat-native-tap.ts';

const fixture = readFileSync(
  new URL('../../../providers/openai-compatible/__fixtures__/text.chunks.txt', import.meta.url),
  'utf8',
);
const fixtureUsage = {
  prompt_tokens: 19,
  completion_tokens: 10,
  total_tokens: 29,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: {
    reasoning_tokens: 0,
    audio_tokens: 0,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
  },
};
const textEncoder = new TextEncoder();

/** Splits text into byte chunks of `size` bytes, so events and characters are cut at arbitrary places. */
function byteChunks(text: string, size: number): Uint8Array[] {
  const bytes = textEncoder.encode(text);
  const chunks: Uint8Array[] = [];
  for (let start = 0; start < bytes.length; start += size) chunks.push(bytes.slice(start, start + size));
  return chunks;
}

function source(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function passThrough(
  text: string,
  clientWantsUsage: boolean,
  chunkSize = 37,
): Promise<{ output: string; ends: (CanonicalUsage | undefined)[] }> {
  const ends: (CanonicalUsage | undefined)[] = [];
  const stream = source(byteChunks(text, chunkSize)).pipeThrough(
    createOpenAIPassthroughStream({ clientWantsUsage, providerName: 'openai', onEnd: (usage) => ends.push(usage) }),
  );
  const output = await new Response(stream).text();
  return { output, ends };
}

const dataOf = (text: string): string[] =>
  text
    .split('\n\n')
    .filter((block) => block.length > 0)
    .map((block) => {
      expect(block.startsWith('data: ')).toBe(true);
      return block.slice('data: '.length);
    });

describe('createOpenAIPassthroughStream', () => {
  it('drops the usage-only chunk when the client did not ask for usage, and keeps the rest as it came', async () => {
    const { output } = await passThrough(fixture, false);
    const upstream = dataOf(fixture);
    const forwarded = dataOf(output);
    expect(forwarded).toEqual(upstream.filter((data) => !data.includes('"usage":{')));
    expect(forwarded).toHaveLength(upstream.length - 1);
    expect(forwarded.at(-1)).toBe('[DONE]');
    expect(output.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(output).not.toContain('"prompt_tokens"');
  });

  it('passes content chunks through byte for byte', async () => {
    const { output } = await passThrough(fixture, false);
    const content = fixture.split('\n\n').filter((block) => block.includes('"content":"'));
    expect(content.length).toBeGreaterThan(5);
    for (const block of content) expect(output).toContain(`${block}\n\n`);
  });

  it('reports the usage from the fixture to onEnd exactly once', async () => {
    const { ends } = await passThrough(fixture, false);
    expect(ends).toEqual([
      {
        inputTokens: 19,
        outputTokens: 10,
        totalTokens: 29,
        cachedInputTokens: 0,
        reasoningTokens: 0,
        raw: fixtureUsage,
      },
    ]);
  });

  it('keeps the usage chunk when the client asked for it', async () => {
    const { output, ends } = await passThrough(fixture, true);
    expect(output).toBe(fixture);
    expect(ends).toHaveLength(1);
    expect(ends[0]?.totalTokens).toBe(29);
  });

  it('gives the same output fed one byte at a time', async () => {
    expect((await passThrough(fixture, false, 1)).output).toBe((await passThrough(fixture, false)).output);
  });

  it('relays the events before a dropped usage chunk as they came, in one chunk or byte by byte, ASCII or not', async () => {
    for (const content of ['plain words', 'non-ASCII: héllo ✓ 日本']) {
      const blocks = fixture.split('\n\n');
      const upstream = [
        ...blocks.slice(0, 2),
        `data: {"choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}}}],"usage":null}`,
        ...blocks.slice(2),
      ].join('\n\n');
      const expected = upstream
        .split('\n\n')
        .filter((block) => block.length > 0 && !block.includes('"usage":{'))
        .map((block) => `${block}\n\n`)
        .join('');
      const whole = await passThrough(upstream, false, upstream.length * 4);
      expect(whole.output).toBe(expected);
      expect((await passThrough(upstream, false, 1)).output).toBe(expected);
    }
  });

  it('removes usage from a content chunk that carries it, unless the client asked for it', async () => {
    const chunk = {
      id: 'c',
      choices: [{ index: 0, delta: { content: 'Hi' } }],
      usage: { prompt_tokens: 3, completion_tokens: 1 },
    };
    const upstream = `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
    const { output, ends } = await passThrough(upstream, false);
    expect(dataOf(output)).toEqual([JSON.stringify({ id: 'c', choices: chunk.choices }), '[DONE]']);
    expect(ends[0]).toMatchObject({ inputTokens: 3, outputTokens: 1, totalTokens: 4 });
    expect((await passThrough(upstream, true)).output).toBe(upstream);
  });

  it('re-frames CRLF events, keeps event names and flushes a final event without a blank line', async () => {
    const upstream = 'event: message\r\ndata: {"choices":[]}\r\n\r\ndata: [DONE]';
    const { output, ends } = await passThrough(upstream, false, 5);
    expect(output).toBe('event: message\ndata: {"choices":[]}\n\ndata: [DONE]\n\n');
    expect(ends).toEqual([undefined]);
  });

  it('calls onEnd exactly once when the reader cancels midway', async () => {
    const ends: (CanonicalUsage | undefined)[] = [];
    const blocks = fixture.split('\n\n').slice(0, 3);
    let sourceCancelled = false;
    const upstream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const block of blocks) controller.enqueue(textEncoder.encode(`${block}\n\n`));
      },
      cancel() {
        sourceCancelled = true;
      },
    });
    const reader = upstream
      .pipeThrough(
        createOpenAIPassthroughStream({
          clientWantsUsage: false,
          providerName: 'openai',
          onEnd: (usage) => ends.push(usage),
        }),
      )
      .getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('chat.completion.chunk');
    await reader.cancel('client went away');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(ends).toEqual([undefined]);
    expect(sourceCancelled).toBe(true);
  });
});

describe('multi-line events', () => {
  it('re-frames every line of a multi-line data payload with its own data: prefix', async () => {
    const upstream = 'data: {"choices":\ndata: [{"index":0,"delta":{"content":"x"}}]}\n\ndata: [DONE]\n\n';
    const { output } = await passThrough(upstream, false);
    expect(output).toBe(upstream);
  });
});

describe('an upstream that does not end well', () => {
  async function relay(text: string): Promise<{ output: string; failures: unknown[] }> {
    const failures: unknown[] = [];
    const stream = source(byteChunks(text, 11)).pipeThrough(
      createOpenAIPassthroughStream({
        clientWantsUsage: true,
        providerName: 'groq',
        redactor: createSecretRedactor(['sk-upstream-secret-123']),
        onEnd: (_usage, failure) => failures.push(failure),
      }),
    );
    return { output: await new Response(stream).text(), failures };
  }

  it('ends a stream cut off before [DONE] with an error event, never silently', async () => {
    const cut = fixture.slice(0, fixture.indexOf('data: [DONE]'));
    const { output, failures } = await relay(cut);
    const last = dataOf(output).at(-1) as string;
    expect(JSON.parse(last)).toMatchObject({ error: { code: 'upstream_stream_incomplete', type: 'upstream_error' } });
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ status: 502, code: 'upstream_stream_incomplete' });
  });

  it('ends a body that is not an event stream at all with the same error event', async () => {
    const { output } = await relay('<html><body>Bad gateway</body></html>');
    expect(dataOf(output).map((data) => JSON.parse(data) as unknown)).toEqual([
      { error: expect.objectContaining({ code: 'upstream_stream_incomplete' }) as unknown },
    ]);
  });

  it("relays the upstream's own error event with the gateway's secrets redacted, and adds no second one", async () => {
    const head = fixture.split('\n\n')[0] as string;
    const text = `${head}\n\ndata: {"error":{"message":"Invalid key sk-upstream-secret-123","type":"invalid_request_error"}}\n\n`;
    const { output, failures } = await relay(text);
    const events = dataOf(output);
    expect(events).toHaveLength(2);
    expect(events[1]).toBe('{"error":{"message":"Invalid key [redacted]","type":"invalid_request_error"}}');
    expect(failures[0]).toMatchObject({ code: 'upstream_stream_error' });
  });

  it('drops the torn event a cut-off stream ends inside of, so the client can read the error event', async () => {
    const cut = fixture.slice(0, fixture.indexOf('data: [DONE]') - 30);
    const { output } = await relay(cut);
    const events = dataOf(output);
    for (const data of events) expect(() => JSON.parse(data) as unknown).not.toThrow();
    expect(JSON.parse(events.at(-1) as string)).toMatchObject({ error: { code: 'upstream_stream_incomplete' } });
  });

  it('ends a stream whose event is too large to hold with an error event, not a torn connection', async () => {
    const failures: unknown[] = [];
    const head = `${fixture.split('\n\n')[0] as string}\n\n`;
    const huge = `data: {"choices":[{"delta":{"content":"${'x'.repeat(4_000)}"}}]}\n\n`;
    const stream = source(byteChunks(head + huge, 512)).pipeThrough(
      createOpenAIPassthroughStream({
        clientWantsUsage: false,
        providerName: 'groq',
        maxEventLength: 1_000,
        onEnd: (_usage, failure) => failures.push(failure),
      }),
    );
    const events = dataOf(await new Response(stream).text());
    expect(JSON.parse(events.at(-1) as string)).toMatchObject({ error: { code: 'upstream_event_too_large' } });
    expect(failures[0]).toMatchObject({ status: 502, provider: 'groq' });
  });

  it(
    'finds the usage and an error event wherever the stream is cut, the whole stream in one chunk included',
    { timeout: 60_000 },
    () => {
      const blocks = fixture.split('\n\n');
      // An error event quoting a secret in the middle, and a content chunk whose text mentions "usage" and "error".
      const upstream = [
        ...blocks.slice(0, 2),
        'data: {"choices":[{"index":0,"delta":{"content":"the \\"usage\\": {} and \\"error\\" words"}}],"usage":null}',
        'data: {"error":{"message":"Invalid key sk-upstream-secret-123","type":"invalid_request_error"}}',
        ...blocks.slice(2),
      ].join('\n\n');
      const bytes = textEncoder.encode(upstream);
      const run = (cuts: number[], clientWantsUsage: boolean) => {
        const ends: unknown[][] = [];
        let output = '';
        const transformer = createOpenAIPassthroughTransformer({
          clientWantsUsage,
          providerName: 'groq',
          redactor: createSecretRedactor(['sk-upstream-secret-123']),
          onEnd: (...values) => ends.push(values),
        });
        const controller = {
          enqueue: (chunk: Uint8Array) => (output += new TextDecoder().decode(chunk)),
          terminate: () => undefined,
        } as unknown as TransformStreamDefaultController<Uint8Array>;
        const points = [0, ...cuts, bytes.length];
        for (let index = 1; index < points.length; index++)
          void transformer.transform!(bytes.slice(points[index - 1], points[index]), controller);
        void transformer.flush!(controller);
        return { output, ends };
      };
      for (const clientWantsUsage of [false, true]) {
        const whole = run([], clientWantsUsage);
        expect(whole.output).toContain('Invalid key [redacted]');
        expect(whole.output).not.toContain('sk-upstream-secret-123');
        expect(whole.output.includes('"prompt_tokens"')).toBe(clientWantsUsage);
        expect(whole.ends).toEqual([
          [expect.objectContaining({ totalTokens: 29 }), expect.objectContaining({ code: 'upstream_stream_error' })],
        ]);
        for (let cut = 1; cut < bytes.length; cut++) expect(run([cut], clientWantsUsage)).toEqual(whole);
        expect(
          run(
            [...Array(bytes.length - 1).keys()].map((index) => index + 1),
            clientWantsUsage,
          ),
        ).toEqual(whole);
      }
    },
  );

  it('ignores anything an upstream sends after [DONE]', async () => {
    const { output, failures } = await relay(`${fixture}data: {"choices":[{"delta":{"content":"late"}}]}\n\n`);
    expect(output).not.toContain('late');
    expect(failures).toEqual([undefined]);
  });
});
