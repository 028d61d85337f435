import { crc32 as zlibCrc32 } from 'node:zlib';
import { Int64 } from '@smithy/core/event-streams';
import { describe, expect, it } from 'vitest';
import { isGatewayError, type GatewayError } from '../errors.ts';
import { AwsEventStreamDecoder, type AwsEventStreamMessage } from './aws-event-stream-decoder.ts';
import { decodeAwsStreamEvent } from './aws-event-stream-events.ts';
import { awsEventStreamCodec, awsFrame } from './aws-event-stream.test-helper.ts';
import { concatenateChunks } from './concatenate-chunks.ts';
import { crc32 } from './crc32.ts';

const encoder = new TextEncoder();
/** AWS's own codec (the maintained one the SDKs use), as the independent encoder of the messages decoded here. */
const smithy = awsEventStreamCodec;

/** A Bedrock ConverseStream event as AWS frames it. */
const event = (eventType: string, payload: unknown): Uint8Array =>
  awsFrame('event', eventType, JSON.stringify(payload));

const exception = (exceptionType: string, message: string): Uint8Array =>
  awsFrame('exception', exceptionType, JSON.stringify({ message }));

/** A message framed by hand: any header bytes, correct lengths and CRCs unless told otherwise. */
function frame(headers: Uint8Array, payload: Uint8Array, overrides: { headersLength?: number } = {}): Uint8Array {
  const total = 16 + headers.length + payload.length;
  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, total);
  view.setUint32(4, overrides.headersLength ?? headers.length);
  view.setUint32(8, crc32(bytes, 0, 8));
  bytes.set(headers, 12);
  bytes.set(payload, 12 + headers.length);
  view.setUint32(total - 4, crc32(bytes, 0, total - 4));
  return bytes;
}

const conversation = [
  event('messageStart', { role: 'assistant' }),
  event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello 東京 🌤' } }),
  event('contentBlockStop', { contentBlockIndex: 0 }),
  event('messageStop', { stopReason: 'end_turn' }),
  event('metadata', { usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 }, metrics: { latencyMs: 312 } }),
];
const whole = concatenateChunks(conversation);

const decodeAll = (chunks: Uint8Array[]) => {
  const stream = new AwsEventStreamDecoder({ provider: 'bedrock' });
  const messages = chunks.flatMap((chunk) => stream.push(chunk));
  stream.end();
  return messages.map((message) => decodeAwsStreamEvent(message, 'bedrock'));
};

const failure = (work: () => unknown): GatewayError => {
  try {
    work();
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
};

describe('crc32', () => {
  it('is CRC-32/IEEE: the check value, and zlib on random bytes, whole and continued', () => {
    expect(crc32(encoder.encode('123456789'))).toBe(0xcbf43926);
    const bytes = crypto.getRandomValues(new Uint8Array(4096));
    expect(crc32(bytes)).toBe(zlibCrc32(bytes));
    expect(crc32(bytes, 1000, 4096, crc32(bytes, 0, 1000))).toBe(zlibCrc32(bytes));
  });
});

describe('AwsEventStreamDecoder', () => {
  it("decodes AWS's own encoding: every event with its type and JSON payload", () => {
    expect(decodeAll([whole])).toEqual([
      { type: 'messageStart', data: { role: 'assistant' } },
      { type: 'contentBlockDelta', data: { contentBlockIndex: 0, delta: { text: 'Hello 東京 🌤' } } },
      { type: 'contentBlockStop', data: { contentBlockIndex: 0 } },
      { type: 'messageStop', data: { stopReason: 'end_turn' } },
      {
        type: 'metadata',
        data: { usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 }, metrics: { latencyMs: 312 } },
      },
    ]);
  });

  it('gives the same events however the bytes are cut: at every position, and one byte at a time', () => {
    const expected = decodeAll([whole]);
    for (let cut = 0; cut <= whole.length; cut++) {
      expect(decodeAll([whole.subarray(0, cut), whole.subarray(cut)])).toEqual(expected);
    }
    expect(decodeAll(Array.from(whole, (_, index) => whole.subarray(index, index + 1)))).toEqual(expected);
    // Three cuts at random places, many times.
    for (let round = 0; round < 200; round++) {
      const cuts = Array.from({ length: 3 }, () => Math.floor(Math.random() * whole.length)).sort((a, b) => a - b);
      const chunks = [0, ...cuts].map((start, index) => whole.subarray(start, [...cuts, whole.length][index]));
      expect(decodeAll(chunks)).toEqual(expected);
    }
  });

  it('parses every header type as AWS encodes it', () => {
    const bytes = smithy.encode({
      headers: {
        yes: { type: 'boolean', value: true },
        no: { type: 'boolean', value: false },
        byte: { type: 'byte', value: -7 },
        short: { type: 'short', value: -30_000 },
        integer: { type: 'integer', value: 2_000_000_000 },
        long: { type: 'long', value: Int64.fromNumber(-9_007_199_254_740_991) },
        binary: { type: 'binary', value: new Uint8Array([0, 1, 255]) },
        string: { type: 'string', value: 'zürich' },
        timestamp: { type: 'timestamp', value: new Date(1_764_000_000_123) },
        uuid: { type: 'uuid', value: '5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d' },
      },
      body: new Uint8Array([1, 2, 3]),
    });
    const [message] = new AwsEventStreamDecoder({ provider: 'bedrock' }).push(bytes) as [AwsEventStreamMessage];
    expect(message.headers).toEqual({
      yes: true,
      no: false,
      byte: -7,
      short: -30_000,
      integer: 2_000_000_000,
      long: -9_007_199_254_740_991,
      binary: new Uint8Array([0, 1, 255]),
      string: 'zürich',
      timestamp: 1_764_000_000_123,
      uuid: '5a4b3c2d1e0f4a9b8c7d6e5f4a3b2c1d',
    });
    expect([...message.payload]).toEqual([1, 2, 3]);
  });

  it('refuses a wrong CRC in the prelude or the message, and a stream cut inside a message', () => {
    const payloadFlipped = whole.slice();
    payloadFlipped[conversation[0]!.length - 6]! ^= 1;
    expect(failure(() => decodeAll([payloadFlipped])).message).toMatch(/CRC is wrong/);
    const preludeFlipped = whole.slice();
    preludeFlipped[2]! ^= 1;
    expect(failure(() => decodeAll([preludeFlipped])).message).toMatch(/prelude CRC is wrong/);
    const cut = failure(() => decodeAll([whole.subarray(0, whole.length - 3)]));
    expect(cut).toMatchObject({ status: 502, code: 'upstream_invalid_stream', provider: 'bedrock' });
    expect(cut.message).toMatch(/ended inside a message/);
  });

  it('refuses a message over the size limit from its prelude alone, before buffering it', () => {
    const big = frame(new Uint8Array(0), new Uint8Array(5_000));
    const stream = new AwsEventStreamDecoder({ provider: 'bedrock', maxMessageBytes: 4_096 });
    expect(failure(() => stream.push(big.subarray(0, 12)))).toMatchObject({
      status: 502,
      code: 'upstream_event_too_large',
    });
  });

  it('refuses lengths that do not add up and headers that run past their section, with correct CRCs', () => {
    const tooLong = frame(new Uint8Array(4), new Uint8Array(0), { headersLength: 400 });
    expect(failure(() => decodeAll([tooLong])).message).toMatch(/lengths do not add up/);
    // A string header claiming 200 bytes in a 10-byte section.
    const header = new Uint8Array([1, 0x61, 7, 0, 200, 0x62, 0x62, 0x62, 0x62, 0x62]);
    expect(failure(() => decodeAll([frame(header, encoder.encode('{}'))])).message).toMatch(/past its headers/);
    const unknownType = new Uint8Array([1, 0x61, 42]);
    expect(failure(() => decodeAll([frame(unknownType, encoder.encode('{}'))])).message).toMatch(/unknown type 42/);
  });
});

describe('decodeAwsStreamEvent', () => {
  const message = (bytes: Uint8Array) => new AwsEventStreamDecoder({ provider: 'bedrock' }).push(bytes)[0]!;

  it('throws the exceptions as upstream errors with the status AWS documents, retryable where AWS says retry', () => {
    expect(
      failure(() => decodeAwsStreamEvent(message(exception('throttlingException', 'Too many tokens')), 'bedrock')),
    ).toMatchObject({
      status: 429,
      type: 'rate_limit_error',
      upstreamStatus: 429,
      retryable: true,
      message: 'Upstream bedrock ended its stream with throttlingException: Too many tokens',
    });
    expect(
      failure(() => decodeAwsStreamEvent(message(exception('modelStreamErrorException', 'broke')), 'bedrock')),
    ).toMatchObject({
      status: 502,
      upstreamStatus: 424,
      retryable: true,
    });
    expect(
      failure(() => decodeAwsStreamEvent(message(exception('validationException', 'bad')), 'bedrock')),
    ).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      retryable: false,
    });
    const errorMessage = smithy.encode({
      headers: {
        ':message-type': { type: 'string', value: 'error' },
        ':error-code': { type: 'string', value: 'InternalFailure' },
        ':error-message': { type: 'string', value: 'try later' },
      },
      body: new Uint8Array(0),
    });
    expect(failure(() => decodeAwsStreamEvent(message(errorMessage), 'bedrock'))).toMatchObject({
      status: 502,
      upstreamStatus: 500,
      message: 'Upstream bedrock ended its stream with InternalFailure: try later',
    });
  });

  it("unwraps InvokeModelWithResponseStream's chunk events: the base64 event inside, typed by its own type", () => {
    const inner = { type: 'message_start', message: { id: 'msg_1', role: 'assistant', content: [] } };
    const bytes = Buffer.from(JSON.stringify(inner)).toString('base64');
    expect(decodeAwsStreamEvent(message(event('chunk', { bytes })), 'bedrock')).toEqual({
      type: 'message_start',
      data: inner,
    });
    for (const payload of [{}, { bytes: 42 }, { bytes: '%%%not base64' }, { bytes: btoa('<html>') }]) {
      expect(failure(() => decodeAwsStreamEvent(message(event('chunk', payload)), 'bedrock'))).toMatchObject({
        code: 'upstream_invalid_stream',
      });
    }
  });

  it('refuses an event whose payload is not JSON or nests past the limits', () => {
    const notJson = smithy.encode({
      headers: {
        ':message-type': { type: 'string', value: 'event' },
        ':event-type': { type: 'string', value: 'chunk' },
      },
      body: encoder.encode('<html>oops</html>'),
    });
    expect(failure(() => decodeAwsStreamEvent(message(notJson), 'bedrock'))).toMatchObject({
      code: 'upstream_invalid_stream',
    });
    const deep = smithy.encode({
      headers: {
        ':message-type': { type: 'string', value: 'event' },
        ':event-type': { type: 'string', value: 'chunk' },
      },
      body: encoder.encode('['.repeat(5_000) + ']'.repeat(5_000)),
    });
    expect(failure(() => decodeAwsStreamEvent(message(deep), 'bedrock')).message).toMatch(
      /nests deeper than 128 levels/,
    );
  });
});
