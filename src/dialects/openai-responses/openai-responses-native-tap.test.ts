import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';
import { createSecretRedactor, noSecretRedactor, type SecretRedactor } from '../../security/secret-redactor.ts';
import { createResponsesNativeStreamTap } from './openai-responses-native-tap.ts';

const textEncoder = new TextEncoder();
/** OpenAI's stream: reasoning summary, text with multi-byte characters, two function calls, `response.completed`. */
const recorded = readFileSync(new URL('./__fixtures__/openai-responses-stream.txt', import.meta.url), 'utf8');
const recordedBlocks = recorded.trimEnd().split('\n\n');
const recordedId = 'resp_68c2f0a91b3c8190b7d54e2a6f1c09d30e7a4b58c2d61f97';

const recordedUsage: CanonicalUsage = {
  inputTokens: 312,
  outputTokens: 205,
  totalTokens: 517,
  cachedInputTokens: 128,
  reasoningTokens: 64,
  raw: {
    input_tokens: 312,
    input_tokens_details: { cached_tokens: 128 },
    output_tokens: 205,
    output_tokens_details: { reasoning_tokens: 64 },
    total_tokens: 517,
  },
};

interface TapRun {
  output: string;
  ends: { usage: CanonicalUsage | undefined; failure: unknown }[];
  responses: Record<string, unknown>[];
}

async function tap(
  chunks: Uint8Array[],
  options: { redactor?: SecretRedactor; maxEventLength?: number } = {},
): Promise<TapRun> {
  const ends: TapRun['ends'] = [];
  const responses: TapRun['responses'] = [];
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const transformer = createResponsesNativeStreamTap({
    providerName: 'openai-eu',
    redactor: options.redactor ?? noSecretRedactor,
    onEnd: (usage, failure) => ends.push({ usage, failure }),
    onResponse: (response) => responses.push(response),
    ...(options.maxEventLength === undefined ? {} : { maxEventLength: options.maxEventLength }),
  });
  const output = await new Response(source.pipeThrough(new TransformStream(transformer))).text();
  return { output, ends, responses };
}

/**
 * The tap driven directly, without streams (fast enough to run once per cut of the recorded stream): chunks in,
 * decoded output out, `flush` at the end unless the tap terminated the stream.
 */
function tapDirectly(chunks: Uint8Array[]): TapRun {
  const run: TapRun = { output: '', ends: [], responses: [] };
  const transformer = createResponsesNativeStreamTap({
    providerName: 'openai-eu',
    redactor: noSecretRedactor,
    onEnd: (usage, failure) => run.ends.push({ usage, failure }),
    onResponse: (response) => run.responses.push(response),
  });
  const outputDecoder = new TextDecoder();
  let terminated = false;
  const controller = {
    enqueue: (chunk: Uint8Array) => (run.output += outputDecoder.decode(chunk, { stream: true })),
    terminate: () => (terminated = true),
  } as unknown as TransformStreamDefaultController<Uint8Array>;
  for (const chunk of chunks) if (!terminated) void transformer.transform!(chunk, controller);
  if (!terminated) void transformer.flush!(controller);
  return run;
}

/** The text as byte chunks of `size` bytes, cutting events and multi-byte characters at arbitrary places. */
function byteChunks(text: string, size: number): Uint8Array[] {
  const bytes = textEncoder.encode(text);
  const chunks: Uint8Array[] = [];
  for (let start = 0; start < bytes.length; start += size) chunks.push(bytes.slice(start, start + size));
  return chunks;
}

const dataOf = (text: string): Record<string, unknown>[] =>
  text
    .split('\n\n')
    .filter((block) => block.length > 0)
    .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)) as Record<string, unknown>);

/** The recorded stream up to (not including) its first event of `type`. */
const headBefore = (type: string): string => recorded.slice(0, recorded.indexOf(`event: ${type}\n`));

describe('createResponsesNativeStreamTap', () => {
  it('relays a recorded stream byte for byte, reports its usage once and hands over the final response', async () => {
    const { output, ends, responses } = await tap([textEncoder.encode(recorded)]);
    expect(output).toBe(recorded);
    expect(ends).toEqual([{ usage: recordedUsage, failure: undefined }]);
    expect(responses).toHaveLength(1);
    expect(responses[0]).toEqual(dataOf(recordedBlocks.at(-1)!)[0]!.response as Record<string, unknown>);
    expect(responses[0]).toMatchObject({ id: recordedId, status: 'completed' });
  });

  it('gives the same output, usage and response however the bytes are cut', async () => {
    const bytes = textEncoder.encode(recorded);
    const expectedResponse = (await tap([bytes])).responses[0];
    for (let cut = 1; cut < bytes.length; cut++) {
      const { output, ends, responses } = tapDirectly([bytes.slice(0, cut), bytes.slice(cut)]);
      if (output !== recorded) expect({ cut, output }).toEqual({ cut, output: recorded });
      if (ends.length !== 1 || responses.length !== 1 || ends[0]!.usage?.totalTokens !== 517)
        expect({ cut, ends, responses: responses.length }).toEqual({
          cut,
          ends: [{ usage: recordedUsage }],
          responses: 1,
        });
    }
    const single = await tap(byteChunks(recorded, 1));
    expect(single.output).toBe(recorded);
    expect(single.ends).toEqual([{ usage: recordedUsage, failure: undefined }]);
    expect(single.responses).toEqual([expectedResponse]);
  }, 60_000);

  it('is read by the openai SDK as the response OpenAI sent', async () => {
    const { output } = await tap(byteChunks(recorded, 97));
    const client = new OpenAI({
      apiKey: 'test',
      maxRetries: 0,
      fetch: () => Promise.resolve(new Response(output, { headers: { 'content-type': 'text/event-stream' } })),
    });
    const response = await client.responses.stream({ model: 'gpt-5', input: 'Weather?' }).finalResponse();
    expect(response.output_text).toBe('Checking Paris and Tokyo (東京) — one moment 🌤');
    expect(response.output.filter((item) => item.type === 'function_call').map((item) => item.arguments)).toEqual([
      '{"city":"Paris","unit":"celsius"}',
      '{"city":"Tokyo","unit":"celsius"}',
    ]);
  });

  it('ends a stream cut off before its terminal event with a numbered error event, dropping the torn event', async () => {
    const cut = recorded.slice(0, recorded.indexOf('event: response.completed') - 40);
    const { output, ends, responses } = await tap(byteChunks(cut, 13));
    const events = dataOf(output);
    expect(events.at(-2)).toMatchObject({ type: 'response.function_call_arguments.done', sequence_number: 44 });
    expect(events.at(-1)).toEqual({
      type: 'error',
      sequence_number: 45,
      code: 'upstream_stream_incomplete',
      message: `The upstream openai-eu stream (response ${recordedId}) ended without its final response.completed event; the answer may be incomplete.`,
      param: null,
    });
    expect(output.endsWith('\n\n')).toBe(true);
    expect(output).toMatch(/event: error\ndata: [^\n]+\n\n$/);
    expect(ends).toEqual([
      {
        usage: undefined,
        failure: expect.objectContaining({
          status: 502,
          code: 'upstream_stream_incomplete',
          provider: 'openai-eu',
          retryable: true,
        }) as unknown,
      },
    ]);
    expect(responses).toEqual([]);
  });

  it('relays a final event without its blank line when its data is whole', async () => {
    const { output, ends, responses } = await tap([textEncoder.encode(recorded.trimEnd())]);
    expect(output).toBe(recorded);
    expect(ends[0]!.failure).toBeUndefined();
    expect(responses).toHaveLength(1);
  });

  it('ends a body that is not an event stream at all with the error event', async () => {
    const { output, ends } = await tap([textEncoder.encode('<html><body>Bad gateway</body></html>')]);
    expect(output).toMatch(
      /^event: error\ndata: \{"type":"error","sequence_number":0,"code":"upstream_stream_incomplete",/,
    );
    expect(ends).toEqual([
      { usage: undefined, failure: expect.objectContaining({ code: 'upstream_stream_incomplete' }) as unknown },
    ]);
  });

  it("relays the upstream's error and response.failed with the gateway's secrets redacted, and adds no third", async () => {
    const head = headBefore('response.output_item.added');
    const secret = 'sk-proj-secret-1234567890';
    const failedResponse = { id: recordedId, object: 'response', status: 'failed', output: [], usage: null };
    const error = `event: error\ndata: {"type":"error","sequence_number":2,"error":{"type":"invalid_request_error","code":"invalid_api_key","message":"Incorrect API key provided: ${secret}.","param":null}}\n\n`;
    const failed = `event: response.failed\ndata: ${JSON.stringify({
      type: 'response.failed',
      sequence_number: 3,
      response: { ...failedResponse, error: { code: 'server_error', message: `Key ${secret} failed.` } },
    })}\n\n`;
    const late = 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"late"}\n\n';
    const { output, ends, responses } = await tap(byteChunks(head + error + failed + late, 5), {
      redactor: createSecretRedactor([secret]),
    });
    expect(output).toBe(head + error.replace(secret, '[redacted]') + failed.replace(secret, '[redacted]'));
    expect(ends).toEqual([
      {
        usage: undefined,
        failure: expect.objectContaining({ code: 'upstream_stream_error', provider: 'openai-eu' }) as unknown,
      },
    ]);
    expect(responses).toEqual([
      { ...failedResponse, error: { code: 'server_error', message: 'Key [redacted] failed.' } },
    ]);
  });

  it('ends a stream whose event is too large to hold with an error event', async () => {
    const head = headBefore('response.output_item.added');
    const huge = `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":2,"delta":"${'x'.repeat(8_000)}"}\n\n`;
    const { output, ends } = await tap(byteChunks(head + huge + recorded, 512), { maxEventLength: 4_000 });
    expect(dataOf(output).at(-1)).toMatchObject({
      type: 'error',
      sequence_number: 2,
      code: 'upstream_event_too_large',
      param: null,
    });
    expect(output).not.toContain('xxxx');
    expect(ends).toHaveLength(1);
    expect(ends[0]!.failure).toMatchObject({ status: 502, code: 'upstream_event_too_large', provider: 'openai-eu' });
  });

  it('names unnamed events after their type, re-frames CRLF and multi-line data, and drops what follows the end', async () => {
    // `type` not first: the tap must find it without the leading-key shortcut.
    const incomplete = {
      sequence_number: 2,
      type: 'response.incomplete',
      response: {
        id: 'resp_1',
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
        usage: { input_tokens: 5, output_tokens: 7, total_tokens: 12 },
      },
    };
    const upstream = [
      'data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress"}}',
      '',
      ': keep-alive',
      'event: response.output_text.delta',
      'data: {"type":"response.output_text.delta",',
      'data: "sequence_number":1,"delta":"Hi"}',
      '',
      `data: ${JSON.stringify(incomplete)}`,
      '',
      'data: {"type":"response.output_text.delta","sequence_number":3,"delta":"late"}',
      '',
      '',
    ].join('\r\n');
    const { output, ends, responses } = await tap(byteChunks(upstream, 3));
    expect(output).toBe(
      [
        'event: response.created',
        'data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress"}}',
        '',
        'event: response.output_text.delta',
        'data: {"type":"response.output_text.delta",',
        'data: "sequence_number":1,"delta":"Hi"}',
        '',
        'event: response.incomplete',
        `data: ${JSON.stringify(incomplete)}`,
        '',
        '',
      ].join('\n'),
    );
    expect(ends).toEqual([
      {
        usage: { inputTokens: 5, outputTokens: 7, totalTokens: 12, raw: incomplete.response.usage },
        failure: undefined,
      },
    ]);
    expect(responses).toEqual([incomplete.response]);
  });

  it('calls onEnd exactly once, with the cancel reason, when the client goes away', async () => {
    const ends: TapRun['ends'] = [];
    const responses: TapRun['responses'] = [];
    let sourceCancelled = false;
    const upstream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(textEncoder.encode(headBefore('response.content_part.added')));
      },
      cancel() {
        sourceCancelled = true;
      },
    });
    const transformer = createResponsesNativeStreamTap({
      providerName: 'openai',
      redactor: noSecretRedactor,
      onEnd: (usage, failure) => ends.push({ usage, failure }),
      onResponse: (response) => responses.push(response),
    });
    const reader = upstream.pipeThrough(new TransformStream(transformer)).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('response.created');
    await reader.cancel('client went away');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(ends).toEqual([{ usage: undefined, failure: 'client went away' }]);
    expect(responses).toEqual([]);
    expect(sourceCancelled).toBe(true);
  });
});
