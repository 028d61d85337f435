import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';
import { createSecretRedactor, noSecretRedactor } from '../../security/secret-redactor.ts';
import { createAnthropicNativeStreamTap } from './anthropic-messages-native-tap.ts';

const fixture = (name: string): string =>
  readFileSync(new URL(`../../../providers/anthropic/__fixtures__/${name}.chunks.txt`, import.meta.url), 'utf8');

const textEncoder = new TextEncoder();
const signature =
  'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds8H2Ak8CoBR8Rg1IHlpuwM4jSyYJTpmk3wIIDCtfw3Zak5ozcdsR8RTHhNtgmBQ==';

/** A stream shaped as Anthropic records it: thinking with a signature, text with multi-byte characters, tool_use. */
const recorded = [
  'event: message_start',
  'data: {"type":"message_start","message":{"model":"claude-sonnet-4-5-20250929","id":"msg_01Aq9w938a90dw8q","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":389,"cache_creation_input_tokens":1502,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":1502,"ephemeral_1h_input_tokens":0},"output_tokens":8,"service_tier":"standard"}}}',
  '',
  'event: content_block_start',
  'data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}',
  '',
  'event: ping',
  'data: {"type": "ping"}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Weather in two cities — 東京 too 🌤"}}',
  '',
  'event: content_block_delta',
  `data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"${signature}"}}`,
  '',
  'event: content_block_stop',
  'data: {"type":"content_block_stop","index":0}',
  '',
  'event: content_block_start',
  'data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"I\'ll check — « 27 × 453 » "}}',
  '',
  'event: content_block_stop',
  'data: {"type":"content_block_stop","index":1}',
  '',
  'event: content_block_start',
  'data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9","name":"get_weather","input":{}}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\\"location\\": \\"San Fr"}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"ancisco\\"}"}}',
  '',
  'event: content_block_stop',
  'data: {"type":"content_block_stop","index":2}',
  '',
  'event: message_delta',
  'data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":389,"cache_creation_input_tokens":1502,"cache_read_input_tokens":0,"output_tokens":134}}',
  '',
  'event: message_stop',
  'data: {"type":"message_stop"}',
  '',
  '',
].join('\n');

const recordedUsage: CanonicalUsage = {
  inputTokens: 1891,
  outputTokens: 134,
  totalTokens: 2025,
  cachedInputTokens: 0,
  cacheWriteInputTokens: 1502,
  raw: {
    input_tokens: 389,
    cache_creation_input_tokens: 1502,
    cache_read_input_tokens: 0,
    cache_creation: { ephemeral_5m_input_tokens: 1502, ephemeral_1h_input_tokens: 0 },
    output_tokens: 134,
    service_tier: 'standard',
  },
};

interface TapRun {
  output: string;
  ends: { usage: CanonicalUsage | undefined; failure: unknown }[];
}

async function tap(
  chunks: Uint8Array[],
  options: { redactor?: ReturnType<typeof createSecretRedactor>; maxEventLength?: number } = {},
): Promise<TapRun> {
  const ends: TapRun['ends'] = [];
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const transformer = createAnthropicNativeStreamTap({
    providerName: 'anthropic-eu',
    redactor: options.redactor ?? noSecretRedactor,
    onEnd: (usage, failure) => ends.push({ usage, failure }),
    ...(options.maxEventLength === undefined ? {} : { maxEventLength: options.maxEventLength }),
  });
  const output = await new Response(source.pipeThrough(new TransformStream(transformer))).text();
  return { output, ends };
}

/** The text as byte chunks of `size` bytes, cutting events and multi-byte characters at arbitrary places. */
function byteChunks(text: string, size: number): Uint8Array[] {
  const bytes = textEncoder.encode(text);
  const chunks: Uint8Array[] = [];
  for (let start = 0; start < bytes.length; start += size) chunks.push(bytes.slice(start, start + size));
  return chunks;
}

const dataOf = (text: string): unknown[] =>
  text
    .split('\n\n')
    .filter((block) => block.length > 0)
    .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)) as unknown);

describe('createAnthropicNativeStreamTap', () => {
  it('relays a recorded stream byte for byte and reports its merged usage once', async () => {
    const { output, ends } = await tap([textEncoder.encode(recorded)]);
    expect(output).toBe(recorded);
    expect(output).toContain(signature);
    expect(ends).toEqual([{ usage: recordedUsage, failure: undefined }]);
  });

  it('gives the same output and usage however the bytes are cut', { timeout: 60_000 }, async () => {
    const bytes = textEncoder.encode(recorded);
    for (let cut = 1; cut < bytes.length; cut++) {
      const { output, ends } = await tap([bytes.slice(0, cut), bytes.slice(cut)]);
      if (output !== recorded) expect({ cut, output }).toEqual({ cut, output: recorded });
      expect(ends).toEqual([{ usage: recordedUsage, failure: undefined }]);
    }
    expect((await tap(byteChunks(recorded, 1))).output).toBe(recorded);
  });

  it.each(['text', 'thinking', 'tools', 'json-response'])('relays the %s fixture unchanged', async (name) => {
    const text = fixture(name);
    const { output, ends } = await tap(byteChunks(text, 7));
    expect(output).toBe(text);
    expect(ends).toHaveLength(1);
    expect(ends[0]!.failure).toBeUndefined();
    expect(ends[0]!.usage?.outputTokens).toBeGreaterThan(0);
  });

  it('ends a stream cut off before message_stop with an error event, dropping the torn event', async () => {
    const cut = recorded.slice(0, recorded.indexOf('event: message_stop') - 40);
    const { output, ends } = await tap(byteChunks(cut, 13));
    const events = dataOf(output);
    expect(events.at(-2)).toMatchObject({ type: 'content_block_stop', index: 2 });
    expect(events.at(-1)).toEqual({
      type: 'error',
      error: {
        type: 'api_error',
        message:
          'The upstream anthropic-eu stream ended without its final message_stop event; the answer may be incomplete.',
      },
    });
    expect(output.endsWith('\n\n')).toBe(true);
    expect(ends).toHaveLength(1);
    expect(ends[0]!.failure).toMatchObject({
      status: 502,
      code: 'upstream_stream_incomplete',
      provider: 'anthropic-eu',
    });
    expect(ends[0]!.usage).toMatchObject({ inputTokens: 1891, outputTokens: 8 });
  });

  it('relays a final event without its blank line when its data is whole', async () => {
    const { output, ends } = await tap([textEncoder.encode(recorded.trimEnd())]);
    expect(output).toBe(recorded);
    expect(ends[0]!.failure).toBeUndefined();
  });

  it('ends a body that is not an event stream at all with the error event', async () => {
    const { output, ends } = await tap([textEncoder.encode('<html><body>Bad gateway</body></html>')]);
    expect(output).toMatch(/^event: error\ndata: \{"type":"error","error":\{"type":"api_error",/);
    expect(ends).toEqual([
      { usage: undefined, failure: expect.objectContaining({ code: 'upstream_stream_incomplete' }) },
    ]);
  });

  it("relays the upstream's error event with the gateway's secrets redacted, and adds no second one", async () => {
    const head = recorded.slice(0, recorded.indexOf('event: content_block_start'));
    const error =
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded for key sk-ant-secret-123"}}\n\n';
    const late = 'event: content_block_start\ndata: {"type":"content_block_start","index":0}\n\n';
    const { output, ends } = await tap(byteChunks(head + error + late, 5), {
      redactor: createSecretRedactor(['sk-ant-secret-123']),
    });
    expect(output).toBe(
      `${head}event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded for key [redacted]"}}\n\n`,
    );
    expect(ends).toHaveLength(1);
    expect(ends[0]!.failure).toMatchObject({ code: 'upstream_stream_error', provider: 'anthropic-eu' });
    expect(ends[0]!.usage).toMatchObject({ inputTokens: 1891 });
  });

  it('ends a stream whose event is too large to hold with an error event', async () => {
    const head = recorded.slice(0, recorded.indexOf('event: content_block_start'));
    const huge = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${'x'.repeat(4_000)}"}}\n\n`;
    const { output, ends } = await tap(byteChunks(head + huge + recorded, 512), { maxEventLength: 1_000 });
    const events = dataOf(output);
    expect(events.at(-1)).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    expect(output).not.toContain('xxxx');
    expect(ends).toHaveLength(1);
    expect(ends[0]!.failure).toMatchObject({ status: 502, code: 'upstream_event_too_large', provider: 'anthropic-eu' });
  });

  it('names unnamed events after their type, re-frames CRLF and multi-line data, and drops what follows message_stop', async () => {
    const upstream = [
      'data: {"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":5,"output_tokens":1}}}',
      '',
      ': a comment',
      'event: content_block_delta',
      'data: {"type":"content_block_delta",',
      'data: "index":0}',
      '',
      'data: {"usage":{"output_tokens":7},"type":"message_delta","delta":{"stop_reason":"end_turn"}}',
      '',
      'data: {"type":"message_stop"}',
      '',
      'event: ping',
      'data: {"type":"ping"}',
      '',
      '',
    ].join('\r\n');
    const { output, ends } = await tap(byteChunks(upstream, 3));
    expect(output).toBe(
      [
        'event: message_start',
        'data: {"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":5,"output_tokens":1}}}',
        '',
        'event: content_block_delta',
        'data: {"type":"content_block_delta",',
        'data: "index":0}',
        '',
        'event: message_delta',
        'data: {"usage":{"output_tokens":7},"type":"message_delta","delta":{"stop_reason":"end_turn"}}',
        '',
        'event: message_stop',
        'data: {"type":"message_stop"}',
        '',
        '',
      ].join('\n'),
    );
    expect(ends).toEqual([
      {
        usage: { inputTokens: 5, outputTokens: 7, totalTokens: 12, raw: { input_tokens: 5, output_tokens: 7 } },
        failure: undefined,
      },
    ]);
  });

  it('calls onEnd exactly once, with the cancel reason and the usage so far, when the client goes away', async () => {
    const ends: TapRun['ends'] = [];
    let sourceCancelled = false;
    const head = recorded.slice(0, recorded.indexOf('event: content_block_stop'));
    const upstream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(textEncoder.encode(head));
      },
      cancel() {
        sourceCancelled = true;
      },
    });
    const transformer = createAnthropicNativeStreamTap({
      providerName: 'anthropic',
      redactor: noSecretRedactor,
      onEnd: (usage, failure) => ends.push({ usage, failure }),
    });
    const reader = upstream.pipeThrough(new TransformStream(transformer)).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('message_start');
    await reader.cancel('client went away');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(ends).toEqual([
      { usage: expect.objectContaining({ inputTokens: 1891, outputTokens: 8 }), failure: 'client went away' },
    ]);
    expect(sourceCancelled).toBe(true);
  });
});
