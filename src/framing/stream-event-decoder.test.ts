import { describe, expect, it } from 'vitest';
import { awsFrame } from './aws-event-stream.test-helper.ts';
import { openStreamEventDecoder } from './stream-event-decoder.ts';

const encoder = new TextEncoder();

describe('createStreamEventDecoder', () => {
  it('reads SSE at once: JSON events with their names, and the [DONE] sentinel as the end', () => {
    const decoder = openStreamEventDecoder('sse', 'openai-compatible');
    if (decoder instanceof Promise) throw new Error('SSE is decoded without an await');
    const bytes = encoder.encode('data: {"a":1}\n\nevent: named\ndata: {"b":"東"}\n\ndata: [DONE]\n\n');
    expect([...decoder.push(bytes.subarray(0, 20)), ...decoder.push(bytes.subarray(20)), ...decoder.end()]).toEqual([
      { type: undefined, data: { a: 1 } },
      { type: 'named', data: { b: '東' } },
      'end',
    ]);
  });

  it('reads the AWS event stream (loaded on demand): each message as its event type and JSON payload; a cut message fails at the end', async () => {
    const frame = awsFrame('event', 'messageStart', '{"role":"assistant"}');
    const decoder = await openStreamEventDecoder('aws-event-stream', 'bedrock');
    expect(decoder.push(frame)).toEqual([{ type: 'messageStart', data: { role: 'assistant' } }]);
    expect(decoder.end()).toEqual([]);
    const cut = await openStreamEventDecoder('aws-event-stream', 'bedrock');
    expect(cut.push(frame.subarray(0, frame.length - 1))).toEqual([]);
    expect(() => cut.end()).toThrow(/ended inside a message/);
  });
});
