import { describe, expect, it } from 'vitest';
import type { GatewayError } from '../errors.ts';
import { awsFrame } from '../framing/aws-event-stream.test-helper.ts';
import { createAwsEventDecoder } from '../framing/aws-stream-event-decoder.ts';
import type { CancellableTransformer } from '../framing/stream-end.ts';
import { reframedAsServerSentEvents } from './native-event-stream.ts';

const decoder = new TextDecoder();

/** A chunk message of InvokeModelWithResponseStream carrying one Anthropic event. */
const chunk = (event: Record<string, unknown>) =>
  awsFrame('event', 'chunk', JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64') }));

/** Runs bytes through the reframing in front of a tap that records what it is given. */
async function run(pieces: Uint8Array[]): Promise<string> {
  const seen: string[] = [];
  const tap: CancellableTransformer<Uint8Array, Uint8Array> = {
    transform(bytes, controller) {
      seen.push(decoder.decode(bytes));
      controller.enqueue(bytes);
    },
  };
  const renderBreak = (error: GatewayError) => `event: error\ndata: ${JSON.stringify({ message: error.message })}\n\n`;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(piece);
      controller.close();
    },
  }).pipeThrough(new TransformStream(reframedAsServerSentEvents(tap, createAwsEventDecoder('bedrock'), renderBreak)));
  const reader = stream.getReader();
  for (;;) if ((await reader.read()).done) break;
  return seen.join('');
}

describe('reframedAsServerSentEvents', () => {
  it("gives the tap Anthropic's SSE from Bedrock's chunks, however the frames are split", async () => {
    const frames = [chunk({ type: 'message_start', message: { id: 'msg_1' } }), chunk({ type: 'message_stop' })];
    const whole = Buffer.concat(frames);
    const expected =
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1"}}\n\n' +
      'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    expect(await run([whole])).toBe(expected);
    expect(await run(Array.from(whole, (byte) => Uint8Array.of(byte)))).toBe(expected);
  });

  it("ends with the dialect's error event on a broken frame or an AWS exception, and reads nothing after it", async () => {
    const damaged = chunk({ type: 'message_stop' });
    damaged[damaged.length - 1] = (damaged[damaged.length - 1] ?? 0) ^ 0xff;
    const broken = await run([chunk({ type: 'message_start' }), damaged, chunk({ type: 'ping' })]);
    expect(broken).toMatch(/^event: message_start\n[^]*event: error\ndata: \{"message":"[^"]*CRC/);
    expect(broken).not.toContain('ping');
    const throttled = await run([awsFrame('exception', 'throttlingException', '{"message":"Too many requests"}')]);
    expect(throttled).toContain('Too many requests');
  });
});
