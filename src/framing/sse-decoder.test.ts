import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../tests/support/seeded-random.ts';
import type { ServerSentEvent } from './server-sent-event.ts';
import { createSseDecoderStream, defaultSseMaxLineLength, SseDecoder } from './sse-decoder.ts';

function decodeWhole(text: string): ServerSentEvent[] {
  const decoder = new SseDecoder();
  return [...decoder.push(text), ...decoder.end()];
}

function decodePieces(pieces: string[]): ServerSentEvent[] {
  const decoder = new SseDecoder();
  return [...pieces.flatMap((piece) => decoder.push(piece)), ...decoder.end()];
}

async function decodeBytes(chunks: Uint8Array[]): Promise<ServerSentEvent[]> {
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const events: ServerSentEvent[] = [];
  for await (const event of source.pipeThrough(createSseDecoderStream())) events.push(event);
  return events;
}

const event = (data: string, name?: string, id?: string): ServerSentEvent => ({ event: name, data, id });

describe('SseDecoder', () => {
  it('dispatches an event on a blank line, dropping one leading space of the value', () => {
    const decoder = new SseDecoder();
    expect(decoder.push('data: {"a":1}\n')).toEqual([]);
    expect(decoder.push('\n')).toEqual([event('{"a":1}')]);
    expect(decoder.end()).toEqual([]);
  });

  it('joins repeated data lines with "\\n" and keeps extra spaces', () => {
    expect(decodeWhole('data: first\ndata:second\ndata:  third\ndata\n\n')).toEqual([event('first\nsecond\n third\n')]);
  });

  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('accepts %s line ends', (_name, end) => {
    const text = `event: ping${end}data: one${end}data: two${end}${end}data: three${end}${end}`;
    expect(decodeWhole(text)).toEqual([event('one\ntwo', 'ping'), event('three')]);
  });

  it('accepts mixed line ends in one stream', () => {
    expect(decodeWhole('data: a\r\n\ndata: b\r\rdata: c\n\r\n')).toEqual([event('a'), event('b'), event('c')]);
  });

  it('treats a CRLF split across two chunks as one line end', () => {
    expect(decodePieces(['data: a\r', '\ndata: b\r', '\n\r', '\n'])).toEqual([event('a\nb')]);
  });

  it('treats a CR at the end of a chunk followed by other text as a line end', () => {
    expect(decodePieces(['data: a\r', 'data: b\r', '\r'])).toEqual([event('a\nb')]);
  });

  it('ignores comment lines, including a comment-only block', () => {
    expect(decodeWhole(': keep-alive\n\n:another\ndata: x\n: inside\n\n')).toEqual([event('x')]);
  });

  it('reads event and id fields; the id persists while the event name resets', () => {
    expect(decodeWhole('event: message_start\nid: 7\ndata: a\n\ndata: b\n\nid: 8\nevent: done\ndata: c\n\n')).toEqual([
      event('a', 'message_start', '7'),
      event('b', undefined, '7'),
      event('c', 'done', '8'),
    ]);
  });

  it('ignores an id containing NUL and unknown fields', () => {
    expect(decodeWhole('id: 1\ndata: a\n\nid: 2\0\nretry: 10\nfoo: bar\ndata: b\n\n')).toEqual([
      event('a', undefined, '1'),
      event('b', undefined, '1'),
    ]);
  });

  it('does not dispatch an event without data, and forgets its name', () => {
    expect(decodeWhole('event: ping\n\ndata: x\n\n')).toEqual([event('x')]);
  });

  it('dispatches a final event without its blank line on end()', () => {
    const decoder = new SseDecoder();
    expect(decoder.push('data: one\n\nevent: last\ndata: two')).toEqual([event('one')]);
    expect(decoder.end()).toEqual([event('two', 'last')]);
  });

  it('dispatches on end() an event whose last line ended but whose blank line never came', () => {
    const decoder = new SseDecoder();
    expect(decoder.push('data: tail\n')).toEqual([]);
    expect(decoder.end()).toEqual([event('tail')]);
  });

  it('gives the same events fed one character at a time as fed whole', () => {
    const text = [
      ': comment\r\n',
      'event: message_start\r\nid: 1\r\ndata: {"type":"message_start"}\r\n\r\n',
      'data: line one\rdata: line two\r\r',
      'event: delta\ndata: {"text":"héllo 👋"}\n\n',
      'data: [DONE]',
    ].join('');
    const whole = decodeWhole(text);
    expect(whole).toEqual([
      event('{"type":"message_start"}', 'message_start', '1'),
      event('line one\nline two', undefined, '1'),
      event('{"text":"héllo 👋"}', 'delta', '1'),
      event('[DONE]', undefined, '1'),
    ]);
    expect(decodePieces([...text])).toEqual(whole);
    expect(decodePieces(text.split(''))).toEqual(whole);
  });
});

describe('createSseDecoderStream', () => {
  it('decodes a multi-byte UTF-8 character split across chunks', async () => {
    const bytes = new TextEncoder().encode('data: {"text":"€ and 🙂"}\n\n');
    const euro = bytes.indexOf(0xe2);
    const emoji = bytes.indexOf(0xf0);
    const chunks = [bytes.slice(0, euro + 1), bytes.slice(euro + 1, emoji + 2), bytes.slice(emoji + 2)];
    expect(await decodeBytes(chunks)).toEqual([event('{"text":"€ and 🙂"}')]);
  });

  it('decodes a stream fed one byte at a time, including a final event without a blank line', async () => {
    const bytes = new TextEncoder().encode('event: a\r\ndata: 1\r\n\r\ndata: ünï\r\ndata: 2');
    const chunks = [...bytes].map((byte) => Uint8Array.of(byte));
    expect(await decodeBytes(chunks)).toEqual([event('1', 'a'), event('ünï\n2')]);
  });
});

describe('SseDecoder regressions', () => {
  it('keeps a split CRLF together across an empty chunk', () => {
    expect(decodePieces(['data: a\r', '', '\ndata: b\r\n\r\n']).map((event) => event.data)).toEqual(['a\nb']);
  });
});

// Defect (issue 8, item 16b): a long line arriving in many small chunks was rescanned (and the growing buffer
// re-concatenated) from its start on every push, so its cost grew with the square of its length; nor was there any
// bound on how much one line could make the decoder hold.
describe('SseDecoder: linear time, bounded memory', () => {
  /** Feeds `text` in pieces of `size` characters; returns the events and how long it took. */
  function feedInPieces(decoder: SseDecoder, text: string, size: number): { events: ServerSentEvent[]; ms: number } {
    const started = performance.now();
    const events: ServerSentEvent[] = [];
    const collect = (decoded: ServerSentEvent[]) => {
      for (const one of decoded) events.push(one);
    };
    for (let offset = 0; offset < text.length; offset += size) collect(decoder.push(text.slice(offset, offset + size)));
    collect(decoder.end());
    return { events, ms: performance.now() - started };
  }

  it('decodes a 5 MB line fed in 16-character pieces in bounded time', () => {
    const payload = 'x'.repeat(5 * 1024 * 1024);
    const { events, ms } = feedInPieces(new SseDecoder(), `data: ${payload}\n\n`, 16);
    expect(events).toHaveLength(1);
    expect(events[0]?.data.length).toBe(payload.length);
    expect(events[0]?.data === payload).toBe(true);
    // Linear: well under a second on an idle machine; the quadratic decoder needed hours. Generous for a busy one.
    expect(ms).toBeLessThan(10_000);
  }, 60_000);

  it('decodes a 1 MB line fed one character at a time in bounded time, with a CRLF split at its end', () => {
    const payload = 'y'.repeat(1024 * 1024);
    const { events, ms } = feedInPieces(
      new SseDecoder(),
      `event: big\r\ndata: ${payload}\r\n\r\ndata: after\r\n\r\n`,
      1,
    );
    expect(events.map((event) => [event.event, event.data.length])).toEqual([
      ['big', payload.length],
      [undefined, 5],
    ]);
    expect(ms).toBeLessThan(10_000);
  }, 60_000);

  it('decodes 400,000 LF-only events arriving in one piece in bounded time', () => {
    // The quadratic decoder looked for a CR through the rest of the text after every line: about 25 s here.
    const text = 'data: {"n":1}\n\n'.repeat(400_000);
    const { events, ms } = feedInPieces(new SseDecoder(), text, text.length);
    expect(events).toHaveLength(400_000);
    expect(ms).toBeLessThan(5_000);
  }, 60_000);

  it('refuses a line longer than maxLineLength with a clear error, however it arrives', () => {
    for (const size of [1, 7, 5_000]) {
      const decoder = new SseDecoder({ maxLineLength: 1_000 });
      expect(() => feedInPieces(decoder, `data: ${'z'.repeat(2_000)}\n\n`, size)).toThrow(
        expect.objectContaining({
          status: 502,
          type: 'upstream_error',
          code: 'upstream_event_too_large',
          message: 'The upstream sent a server-sent event line longer than 1000 characters.',
        }),
      );
    }
  });

  it('accepts a line exactly at maxLineLength, its line end not counted', () => {
    const line = `data: ${'z'.repeat(994)}`;
    expect(line.length).toBe(1_000);
    for (const size of [1, 3, 1_002])
      expect(feedInPieces(new SseDecoder({ maxLineLength: 1_000 }), `${line}\r\n\r\n`, size).events).toEqual([
        event('z'.repeat(994)),
      ]);
  });

  it('refuses an event whose data lines add up to more than maxLineLength', () => {
    const decoder = new SseDecoder({ maxLineLength: 1_000 });
    expect(() => decoder.push(`${'data: 0123456789\n'.repeat(100)}\n`)).toThrow(
      expect.objectContaining({ code: 'upstream_event_too_large' }),
    );
    // Exactly at the limit: 100 lines of 9 characters and the 99 line breaks that join them.
    const joined = new SseDecoder({ maxLineLength: 999 }).push(`${'data: 012345678\n'.repeat(100)}\n`);
    expect(joined[0]?.data.length).toBe(999);
  });

  it('caps lines at 16 MiB by default', () => {
    expect(defaultSseMaxLineLength).toBe(16 * 1024 * 1024);
  });

  it('gives the same events however a stream is cut (seeded random pieces)', () => {
    const text = [
      ': comment\r\n',
      'event: message_start\r\nid: 1\r\ndata: {"type":"message_start"}\r\n\r\n',
      `data: ${'long '.repeat(500)}\rdata: line two\r\r`,
      'event: delta\ndata: {"text":"héllo 👋"}\n\n',
      'data: [DONE]',
    ].join('');
    const whole = decodeWhole(text);
    const next = seededRandom(20261201);
    for (let round = 0; round < 200; round++) {
      const pieces: string[] = [];
      for (let offset = 0; offset < text.length;) {
        // Mostly tiny pieces (empty ones included) on even rounds, larger ones on odd rounds.
        const size = Math.floor(next() * (round % 2 === 0 ? 8 : 600));
        pieces.push(text.slice(offset, offset + size));
        offset += size;
      }
      expect(decodePieces(pieces)).toEqual(whole);
    }
  });
});

describe('SseDecoder.lastPushCanonical', () => {
  const canonicalAfter = (...pushes: string[]): boolean => {
    const decoder = new SseDecoder();
    for (const text of pushes) decoder.push(text);
    return decoder.lastPushCanonical;
  };

  it('holds for whole events framed as a relay frames them', () => {
    expect(canonicalAfter('data: {"a":1}\n\n')).toBe(true);
    expect(canonicalAfter('event: message_start\ndata: {"a":1}\n\ndata: [DONE]\n\n')).toBe(true);
    expect(canonicalAfter('data: line one\ndata: line two\n\n')).toBe(true);
    expect(canonicalAfter('data: \n\n')).toBe(true);
    expect(canonicalAfter('data: {"a":1}\n', 'data: {"b":2}\n\n')).toBe(false);
    expect(canonicalAfter('data: {"a":1}\n\n', 'data: {"b":2}\n\n')).toBe(true);
  });

  it('fails for anything a relay would frame differently, or a push that does not start and end between events', () => {
    for (const text of [
      'data: {"a":1}\r\n\r\n', // CRLF
      'data:{"a":1}\n\n', // no space
      'data  : x\n\n', // an unknown field
      ': keep-alive\n\ndata: x\n\n', // a comment
      'id: 7\ndata: x\n\n', // an id, which relaying drops
      'retry: 10\ndata: x\n\n',
      'data: x\nevent: late\n\n', // the type after the data
      'event: a\nevent: b\ndata: x\n\n',
      'event:x\ndata: y\n\n',
      'data: x\n\n\n', // a blank line that dispatches nothing
      'event: lonely\n\n', // an event without data, dropped
      'data: x\n\ndata: torn', // ends inside an event
      'data: x\n', // ends before its blank line
      '',
    ]) {
      expect(canonicalAfter(text), JSON.stringify(text)).toBe(false);
    }
    expect(canonicalAfter('data: x', '\n\n')).toBe(false); // began inside an event
    expect(canonicalAfter('data: x\r', '\ndata: y\n\n')).toBe(false); // a CR pending from before
  });
});

describe('SseDecoder.lastPushEventEnds', () => {
  it('says where each event of the last push ends in its text, and whether the push began inside an event', () => {
    const decoder = new SseDecoder();
    const text = 'data: a\n\nevent: e\ndata: bb\r\n\r\n: comment\n\ndata: c';
    expect(decoder.push(text).map((event) => event.data)).toEqual(['a', 'bb']);
    expect(decoder.lastPushEventEnds).toEqual([9, 30]);
    expect(text.slice(9, 30)).toBe('event: e\ndata: bb\r\n\r\n');
    expect(decoder.lastPushStartedInsideEvent).toBe(false);
    // The comment's blank line dispatched nothing; `data: c` is unfinished, so the next push begins inside it.
    expect(decoder.push('c\n\ndata: d\n\n').map((event) => event.data)).toEqual(['cc', 'd']);
    expect(decoder.lastPushEventEnds).toEqual([3, 12]);
    expect(decoder.lastPushStartedInsideEvent).toBe(true);
    expect(decoder.push('')).toEqual([]);
    expect(decoder.lastPushEventEnds).toEqual([]);
    expect(decoder.lastPushStartedInsideEvent).toBe(false);
  });
});
