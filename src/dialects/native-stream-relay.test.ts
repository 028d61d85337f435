import { describe, expect, it } from 'vitest';
import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import { createSecretRedactor, noSecretRedactor } from '../security/secret-redactor.ts';
import {
  createNativeStreamRelay,
  frameRelayedEvent,
  frameRelayedEvents,
  relayedEventType,
  type NativeStreamDialect,
} from './native-stream-relay.ts';

const textEncoder = new TextEncoder();
const usage: CanonicalUsage = { inputTokens: 3, outputTokens: 2, totalTokens: 5 };

interface RelayRun {
  output: string;
  ends: { usage: CanonicalUsage | undefined; failure: unknown }[];
  /** The data of every event the dialect was handed, in order. */
  seen: string[];
}

/**
 * A minimal dialect: `END` (whole, though not JSON) ends the stream, an event named `error` records an upstream
 * error, and every event is relayed as it came. Its break event names the failure's code.
 */
function fakeDialect(seen: string[]): NativeStreamDialect {
  let done = false;
  return {
    relay(events, stream) {
      let output = '';
      for (const event of events) {
        if (done) break;
        seen.push(event.data);
        if (event.data === 'END') done = true;
        else if (event.event === 'error') stream.recordUpstreamError();
        output += frameRelayedEvent(event.event, event.data);
      }
      return output;
    },
    ended: () => done,
    usage: () => usage,
    renderBreak: (error) => `event: break\ndata: ${error.code}\n\n`,
    incompleteMessage: () => 'The upstream stream ended without END.',
    wholeData: 'END',
  };
}

function source(chunks: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(textEncoder.encode(chunk));
      controller.close();
    },
  });
}

async function relay(chunks: string[], maxEventLength?: number): Promise<RelayRun> {
  const ends: RelayRun['ends'] = [];
  const seen: string[] = [];
  const transformer = createNativeStreamRelay(
    {
      providerName: 'acme-eu',
      redactor: createSecretRedactor(['sk-secret-123']),
      onEnd: (endUsage, failure) => ends.push({ usage: endUsage, failure }),
      ...(maxEventLength === undefined ? {} : { maxEventLength }),
    },
    fakeDialect(seen),
  );
  const output = await new Response(source(chunks).pipeThrough(new TransformStream(transformer))).text();
  return { output, ends, seen };
}

describe('createNativeStreamRelay', () => {
  it('relays events however the bytes are cut, and reports the usage to onEnd once', { timeout: 60_000 }, async () => {
    const upstream = 'data: {"a":1}\n\nevent: x\r\ndata: {"b":\r\ndata: 2}\r\n\r\ndata: END\n\n';
    const expected = 'data: {"a":1}\n\nevent: x\ndata: {"b":\ndata: 2}\n\ndata: END\n\n';
    for (let cut = 1; cut < upstream.length; cut++) {
      const { output, ends } = await relay([upstream.slice(0, cut), upstream.slice(cut)]);
      expect({ cut, output }).toEqual({ cut, output: expected });
      expect(ends).toEqual([{ usage, failure: undefined }]);
    }
  });

  it('hands the dialect nothing after the stream ended', async () => {
    const { output, seen, ends } = await relay([
      'data: {"a":1}\n\ndata: END\n\ndata: {"late":1}\n\n',
      'data: {"b":2}\n\n',
    ]);
    expect(output).toBe('data: {"a":1}\n\ndata: END\n\n');
    expect(seen).toEqual(['{"a":1}', 'END']);
    expect(ends).toEqual([{ usage, failure: undefined }]);
  });

  describe('the last event, without the blank line after it', () => {
    it('is relayed when its data is whole JSON', async () => {
      const { output } = await relay(['data: {"a":1}\n\ndata: {"b":2}']);
      expect(output).toMatch(/^data: \{"a":1\}\n\ndata: \{"b":2\}\n\nevent: break\n/);
    });

    it("is relayed when its data is the dialect's whole non-JSON payload", async () => {
      const { output, ends } = await relay(['data: {"a":1}\n\ndata: END']);
      expect(output).toBe('data: {"a":1}\n\ndata: END\n\n');
      expect(ends).toEqual([{ usage, failure: undefined }]);
    });

    it('is dropped when torn, so that the error event after it can be read', async () => {
      const { output, seen } = await relay(['data: {"a":1}\n\ndata: {"b":"cut of']);
      expect(seen).toEqual(['{"a":1}']);
      expect(output).toBe('data: {"a":1}\n\nevent: break\ndata: upstream_stream_incomplete\n\n');
    });
  });

  it("ends a stream that stops before the dialect's end with the incomplete failure and its break event", async () => {
    const { output, ends } = await relay(['data: {"a":1}\n\n']);
    expect(output).toBe('data: {"a":1}\n\nevent: break\ndata: upstream_stream_incomplete\n\n');
    expect(ends).toHaveLength(1);
    expect(ends[0]?.usage).toBe(usage);
    expect(ends[0]?.failure).toMatchObject({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_stream_incomplete',
      provider: 'acme-eu',
      retryable: true,
      message: 'The upstream stream ended without END.',
    });
  });

  it('reports an in-band error the dialect recorded, and adds no incomplete failure after it', async () => {
    const { output, ends } = await relay(['event: error\ndata: {"e":1}\n\nevent: error\ndata: {"e":2}\n\n']);
    expect(output).toBe('event: error\ndata: {"e":1}\n\nevent: error\ndata: {"e":2}\n\n');
    expect(ends).toHaveLength(1);
    expect(ends[0]?.failure).toMatchObject({
      code: 'upstream_stream_error',
      provider: 'acme-eu',
      message: 'The upstream acme-eu sent an error in its stream.',
    });
  });

  describe('an event past maxEventLength', () => {
    it("ends the stream with the dialect's break event and the sanitised failure, reading no further", async () => {
      const { output, ends, seen } = await relay(
        ['data: {"a":1}\n\n', `data: {"big":"${'x'.repeat(200)}"}\n\n`, 'data: {"b":2}\n\ndata: END\n\n'],
        100,
      );
      expect(output).toBe('data: {"a":1}\n\nevent: break\ndata: upstream_event_too_large\n\n');
      expect(seen).toEqual(['{"a":1}']);
      expect(ends).toHaveLength(1);
      expect(ends[0]?.failure).toMatchObject({ status: 502, code: 'upstream_event_too_large', provider: 'acme-eu' });
    });

    it('ends the stream the same way when it is the torn last event', async () => {
      const line = `data: ${'x'.repeat(60)}\n`;
      const { output, ends } = await relay(['data: {"a":1}\n\n', line, line.trimEnd()], 100);
      expect(output).toBe('data: {"a":1}\n\nevent: break\ndata: upstream_event_too_large\n\n');
      expect(ends).toHaveLength(1);
      expect(ends[0]?.failure).toMatchObject({ code: 'upstream_event_too_large', provider: 'acme-eu' });
    });

    it('is dropped after the stream ended', async () => {
      const { output, ends } = await relay(['data: END\n\n', `data: ${'x'.repeat(200)}\n\n`], 100);
      expect(output).toBe('data: END\n\n');
      expect(ends).toEqual([{ usage, failure: undefined }]);
    });
  });

  it('calls onEnd exactly once, with the reason, when the reader cancels', async () => {
    const ends: unknown[][] = [];
    let sourceCancelled = false;
    const upstream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(textEncoder.encode('data: {"a":1}\n\n'));
      },
      cancel() {
        sourceCancelled = true;
      },
    });
    const transformer = createNativeStreamRelay(
      { providerName: 'acme', redactor: noSecretRedactor, onEnd: (...values) => ends.push(values) },
      fakeDialect([]),
    );
    const reader = upstream.pipeThrough(new TransformStream(transformer)).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: {"a":1}\n\n');
    await reader.cancel('client went away');
    await new Promise((resolve) => setTimeout(resolve, 0));
    transformer.cancel?.('again');
    expect(ends).toEqual([[usage, 'client went away']]);
    expect(sourceCancelled).toBe(true);
  });

  it('ends the request with the chunk that carries the final event, before the upstream ends', () => {
    for (const framing of ['data: {"a":1}\n\ndata: END\n\n', 'data:{"a":1}\n\ndata:END\n\n']) {
      const ends: unknown[][] = [];
      const transformer = createNativeStreamRelay(
        { providerName: 'acme', redactor: noSecretRedactor, onEnd: (...values) => ends.push(values) },
        fakeDialect([]),
      );
      const written: Uint8Array[] = [];
      let terminated = 0;
      const controller = {
        enqueue: (chunk: Uint8Array) => written.push(chunk),
        terminate: () => void terminated++,
      } as unknown as TransformStreamDefaultController<Uint8Array>;
      void transformer.transform!(textEncoder.encode('data: {"b":2}\n\n'), controller);
      expect(ends).toEqual([]);
      expect(terminated).toBe(0);
      // A client that stops reading at the final event may send its next request now: this one is already counted,
      // and the client's stream ends here (terminated), whatever the upstream does next.
      void transformer.transform!(textEncoder.encode(framing), controller);
      expect(written).toHaveLength(2);
      expect(ends).toEqual([[usage, undefined]]);
      expect(terminated).toBe(1);
      // What the upstream does after its final event changes nothing: a broken connection is not a failure.
      transformer.cancel?.(new Error('upstream connection reset'));
      void transformer.flush!(controller);
      expect(ends).toEqual([[usage, undefined]]);
    }
  });
});

describe('frameRelayedEvent', () => {
  it('frames data under its type, one data: prefix per line', () => {
    expect(frameRelayedEvent(undefined, '{"a":1}')).toBe('data: {"a":1}\n\n');
    expect(frameRelayedEvent('ping', '{"a":\n1}')).toBe('event: ping\ndata: {"a":\ndata: 1}\n\n');
  });
});

describe('relayedEventType', () => {
  const leadingType = /^\s*\{\s*"type"\s*:\s*"([a-z_]+)"/;
  const mayBeWatched = /"(?:stop)"/;
  const event = (data: string, name?: string) => ({ event: name, data, id: undefined });

  it("takes the event's name, else the type its data starts with, else a watched type its data names", () => {
    expect(relayedEventType(event('{"type":"stop"}', 'named'), leadingType, mayBeWatched)).toBe('named');
    expect(relayedEventType(event('{"type":"delta"}', ''), leadingType, mayBeWatched)).toBe('delta');
    expect(relayedEventType(event('{"index":0,"type":"stop"}'), leadingType, mayBeWatched)).toBe('stop');
    expect(relayedEventType(event('{"index":0,"type":"delta"}'), leadingType, mayBeWatched)).toBeUndefined();
    expect(relayedEventType(event('{"index":0,"stop":"stop"'), leadingType, mayBeWatched)).toBeUndefined();
    expect(relayedEventType(event('["stop"]'), leadingType, mayBeWatched)).toBeUndefined();
  });
});

describe('createNativeStreamRelay: unchanged events', () => {
  /** A dialect that changes nothing (relay returns undefined) until `END`, which ends the stream. */
  function untouchedDialect(): NativeStreamDialect {
    let done = false;
    return {
      relay(events) {
        for (let index = 0; index < events.length; index++) {
          if (done) return frameRelayedEvents(events, index);
          done = events[index]!.data === 'END';
        }
        return undefined;
      },
      ended: () => done,
      usage: () => undefined,
      renderBreak: (error) => `event: break\ndata: ${error.code}\n\n`,
      incompleteMessage: () => 'no END',
      wholeData: 'END',
    };
  }

  /** Runs chunks through the relay by hand; returns the chunks it enqueued. */
  function run(chunks: Uint8Array[]): Uint8Array[] {
    const transformer = createNativeStreamRelay(
      { providerName: 'acme', redactor: noSecretRedactor, onEnd: () => undefined },
      untouchedDialect(),
    );
    const out: Uint8Array[] = [];
    const controller = {
      enqueue: (chunk: Uint8Array) => out.push(chunk),
      terminate: () => undefined,
    } as unknown as TransformStreamDefaultController<Uint8Array>;
    for (const chunk of chunks) void transformer.transform!(chunk, controller);
    void transformer.flush!(controller);
    return out;
  }

  it('forwards the upstream bytes themselves when they are whole events framed canonically', () => {
    const first = textEncoder.encode('data: {"a":"\u00e9 é"}\n\nevent: x\ndata: 1\ndata: 2\n\n');
    const second = textEncoder.encode('data: END\n\n');
    const out = run([first, second]);
    expect(out).toHaveLength(2);
    expect(out[0]).toBe(first);
    expect(out[1]).toBe(second);
  });

  it('frames the events again when the bytes are not canonical, cut mid-event, or start with a byte order mark', () => {
    const decode = (chunks: Uint8Array[]) => chunks.map((chunk) => new TextDecoder().decode(chunk)).join('');
    const crlf = run([textEncoder.encode('data: 1\r\n\r\nid: 4\ndata: END\n\n')]);
    expect(decode(crlf)).toBe('data: 1\n\ndata: END\n\n');
    const whole = textEncoder.encode('data: {"a":1}\n\ndata: END\n\n');
    const cut = [whole.slice(0, 9), whole.slice(9)];
    const out = run(cut);
    expect(out.every((chunk) => chunk !== cut[0] && chunk !== cut[1])).toBe(true);
    expect(decode(out)).toBe('data: {"a":1}\n\ndata: END\n\n');
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...textEncoder.encode('data: END\n\n')]);
    expect(decode(run([bom]))).toBe('data: END\n\n');
  });

  it('drops what follows the final event, even in a canonical chunk', () => {
    const out = run([textEncoder.encode('data: 1\n\ndata: END\n\ndata: after\n\n')]);
    expect(out.map((chunk) => new TextDecoder().decode(chunk)).join('')).toBe('data: 1\n\ndata: END\n\n');
  });
});
