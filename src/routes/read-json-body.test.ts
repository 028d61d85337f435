import { describe, expect, it } from 'vitest';
import { isGatewayError, type GatewayError } from '../errors.ts';
import { readJsonObjectBody } from './read-json-body.ts';

const url = 'http://gateway.test/v1/chat/completions';
const textEncoder = new TextEncoder();

function jsonRequest(body: string): Request {
  return new Request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
}

/** A request whose body is a stream, so it carries no content-length (chunked transfer). */
function chunkedRequest(chunks: string[], onPull?: () => void): Request {
  const pending = chunks.map((chunk) => textEncoder.encode(chunk));
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      onPull?.();
      const next = pending.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
  });
  return new Request(url, { method: 'POST', body, duplex: 'half' } as RequestInit);
}

async function rejection(request: Request, limit: number): Promise<GatewayError> {
  try {
    await readJsonObjectBody(request, limit);
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected the body to be rejected');
}

describe('readJsonObjectBody', () => {
  it('returns a JSON object body', async () => {
    expect(await readJsonObjectBody(jsonRequest('{"model":"m","messages":[]}'), 1024)).toEqual({
      model: 'm',
      messages: [],
    });
  });

  it('reads a chunked body under the limit, with a multi-byte character split across chunks', async () => {
    const bytes = textEncoder.encode('{"text":"€"}');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 10));
        controller.enqueue(bytes.slice(10));
        controller.close();
      },
    });
    const request = new Request(url, { method: 'POST', body, duplex: 'half' } as RequestInit);
    expect(request.headers.get('content-length')).toBeNull();
    expect(await readJsonObjectBody(request, 1024)).toEqual({ text: '€' });
  });

  it('accepts a body exactly at the limit', async () => {
    const body = '{"a":"xxxx"}';
    expect(await readJsonObjectBody(jsonRequest(body), body.length)).toEqual({ a: 'xxxx' });
    expect(await readJsonObjectBody(chunkedRequest([body.slice(0, 5), body.slice(5)]), body.length)).toEqual({
      a: 'xxxx',
    });
  });

  it('answers 413 request_too_large when content-length is over the limit', async () => {
    const request = new Request(url, {
      method: 'POST',
      body: JSON.stringify({ text: 'x'.repeat(200) }),
      headers: { 'content-length': '211' },
    });
    expect(request.headers.get('content-length')).toBe('211');
    const error = await rejection(request, 100);
    expect(error.status).toBe(413);
    expect(error.type).toBe('invalid_request_error');
    expect(error.code).toBe('request_too_large');
    expect(error.message).toBe('Request body too large: the limit is 100 bytes.');
  });

  it('trusts a declared content-length over the limit before reading anything', async () => {
    const request = new Request(url, { method: 'POST', body: '{}', headers: { 'content-length': '5000' } });
    expect((await rejection(request, 1000)).code).toBe('request_too_large');
    expect(request.bodyUsed).toBe(false);
  });

  it('answers 413 for a chunked body over the limit, without reading the rest of it', async () => {
    let pulls = 0;
    const chunks = Array.from({ length: 100 }, (_, index) => (index === 0 ? '{"text":"' : 'x'.repeat(10)));
    const error = await rejection(
      chunkedRequest(chunks, () => pulls++),
      50,
    );
    expect(error.status).toBe(413);
    expect(error.code).toBe('request_too_large');
    expect(pulls).toBeLessThan(20);
  });

  it('counts bytes, not characters, of a chunked body', async () => {
    const error = await rejection(chunkedRequest(['{"t":"', '€'.repeat(10), '"}']), 30);
    expect(error.code).toBe('request_too_large');
  });

  it.each([
    ['malformed JSON', '{"model": "m",'],
    ['an empty body', ''],
    ['a whitespace-only body', ' \n\t '],
    ['an array', '[{"model":"m"}]'],
    ['null', 'null'],
    ['a string', '"hello"'],
    ['a number', '42'],
  ])('answers 400 invalid_json for %s', async (_case, body) => {
    const error = await rejection(jsonRequest(body), 1024);
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(error.code).toBe('invalid_json');
    expect(error.param).toBeNull();
  });

  it('answers 400 invalid_json for a request without a body', async () => {
    const error = await rejection(new Request(url, { method: 'POST' }), 1024);
    expect(error.code).toBe('invalid_json');
    expect(error.message).toBe('The request body is empty; send a JSON object.');
  });

  it('names the parse failure in the message of a malformed body', async () => {
    const error = await rejection(jsonRequest('{oops}'), 1024);
    expect(error.message).toMatch(
      /^We could not parse the JSON body of your request \(.+\)\. Send a valid JSON object/,
    );
  });

  it('answers 400 invalid_body when the body stream fails', async () => {
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error('connection reset'));
      },
    });
    const error = await rejection(new Request(url, { method: 'POST', body, duplex: 'half' } as RequestInit), 1024);
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_body');
  });
});
