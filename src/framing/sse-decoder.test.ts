import { describe, expect, it } from 'vitest';
import type { ServerSentEvent } from './server-sent-event.ts';
import { createSseDecoderStream, SseDecoder } from './sse-decoder.ts';

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
