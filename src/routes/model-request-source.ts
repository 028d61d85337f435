import { GatewayError } from '../errors.ts';
/** A request's headers as the pipeline reads them: one value by lower-case name, or null. `Headers` is one. */
export interface HeaderReader {
  get(name: string): string | null;
}

/**
 * What the model-request pipeline reads of a client's request: its headers, its body as text, and whether the client
 * is still there. A fetch `Request` is one ({@link fetchRequestSource}); the Node server builds one straight from its
 * incoming message, with no `Request` in between (adapters/node/node-direct-route.ts).
 */
export interface ModelRequestSource {
  headers: HeaderReader;
  /** Aborted when the client goes away before the response is complete. */
  signal: AbortSignal;
  /**
   * The whole body as text. Throws the 413 GatewayError of {@link requestTooLarge} when it is longer than
   * `limitBytes` (at once when the declared length says so, else as soon as more arrived), and any other error
   * when the body could not be read. A reader that has the whole text at once may return it as it is (no promise).
   */
  readText(limitBytes: number): string | Promise<string>;
}

/**
 * A fetch Request as the model pipeline's source.
 *
 * @example
 * const source = fetchRequestSource(c.req.raw);
 */
export function fetchRequestSource(request: Request): ModelRequestSource {
  return {
    headers: request.headers,
    signal: request.signal,
    readText: (limitBytes) => readLimitedText(request, limitBytes),
  };
}

/** The 413 for a request body longer than `limit` bytes. */
export function requestTooLarge(limit: number): GatewayError {
  return new GatewayError({
    status: 413,
    type: 'invalid_request_error',
    code: 'request_too_large',
    message: `Request body too large: the limit is ${limit} bytes.`,
  });
}

/** A fetch Request's body as text, refused with a 413 past `limit` bytes (declared, or read so far). */
export async function readLimitedText(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get('content-length');
  if (declared !== null) {
    if (Number(declared) > limit) throw requestTooLarge(limit);
    return await request.text();
  }
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  let received = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > limit) {
      await reader.cancel();
      throw requestTooLarge(limit);
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}
