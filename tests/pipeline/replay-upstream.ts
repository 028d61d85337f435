import type { UpstreamFetch, UpstreamRequestInit, UpstreamResponse } from '../../src/services.ts';

/** One call the gateway made to the upstream. */
export interface RecordedUpstreamCall {
  url: string;
  init: UpstreamRequestInit;
}

/** A fake upstream and the calls it received. */
export interface ReplayUpstream {
  upstreamFetch: UpstreamFetch;
  calls: RecordedUpstreamCall[];
}

/**
 * The one fake of the pipeline tests: an {@link UpstreamFetch} that records each request and answers it with a
 * recorded provider stream, `200 text/event-stream`, its bytes sent in pieces of `pieceLength` (so events straddle
 * chunk boundaries as they do on a socket). It has the shape of the real client's answer (`createFetchUpstream` in
 * src/upstream/fetch-upstream.ts): `headers`, `contentType`, the body as a stream, and `text(maxBytes)` that reads that
 * same body within the byte bound.
 *
 * @example
 * const upstream = createReplayUpstream(readFileSync(fixture, 'utf8'));
 * const gateway = createGateway({ ..., services: { upstreamFetch: upstream.upstreamFetch } });
 */
export function createReplayUpstream(streamText: string, pieceLength = 97): ReplayUpstream {
  const calls: RecordedUpstreamCall[] = [];
  const upstreamFetch: UpstreamFetch = async (url, init) => {
    calls.push({ url, init });
    const bytes = new TextEncoder().encode(streamText);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < bytes.length; offset += pieceLength)
          controller.enqueue(bytes.slice(offset, offset + pieceLength));
        controller.close();
      },
    });
    const headers = new Headers({ 'content-type': 'text/event-stream; charset=utf-8' });
    const response: UpstreamResponse = {
      status: 200,
      ok: true,
      headers,
      contentType: headers.get('content-type'),
      body,
      async text(maxBytes) {
        if (bytes.byteLength > maxBytes) throw new Error(`the replayed body is larger than ${maxBytes} bytes`);
        return new Response(body).text();
      },
    };
    return response;
  };
  return { upstreamFetch, calls };
}
