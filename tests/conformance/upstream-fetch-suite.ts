import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChunkReader, UpstreamFetch, UpstreamRequestInit, UpstreamResponse } from '../../src/services.ts';
import { isUpstreamLimitError } from '../../src/upstream/upstream-limit-error.ts';

/** What the test upstream saw of one response: how much it wrote, and whether its client went away early. */
interface ServedResponse {
  bytesWritten: number;
  closedEarly: boolean;
  finished: Promise<void>;
}

const megabyte = 1024 * 1024;

/** A loopback upstream whose path picks its behaviour; each response is recorded under its `?id=`. */
async function startTestUpstream(): Promise<{
  url: string;
  served: Map<string, ServedResponse>;
  close(): Promise<void>;
}> {
  const served = new Map<string, ServedResponse>();
  const sockets = new Set<Socket>();
  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    let markFinished: () => void = () => {};
    const record: ServedResponse = {
      bytesWritten: 0,
      closedEarly: false,
      finished: new Promise((resolve) => (markFinished = resolve)),
    };
    served.set(url.searchParams.get('id') ?? '', record);
    response.once('close', () => {
      record.closedEarly = !response.writableFinished;
      markFinished();
    });
    const write = (chunk: string | Buffer): boolean => {
      record.bytesWritten += chunk.length;
      return response.write(chunk);
    };
    switch (url.pathname) {
      case '/hang':
        return;
      case '/small':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"ok":true}');
        return;
      case '/stall-body':
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        write('{"partial":');
        return;
      case '/endless': {
        // Writes as fast as the socket takes it, forever: only the client's backpressure or abort stops it.
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = Buffer.alloc(64 * 1024, 'a');
        const pump = (): void => {
          while (!response.destroyed && write(chunk));
          if (!response.destroyed) response.once('drain', pump);
        };
        pump();
        return;
      }
      case '/burst': {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        const events: string[] = [];
        for (let index = 0; index < 20_000; index++) events.push(`data: {"index":${index}}\n\n`);
        const text = events.join('');
        record.bytesWritten = text.length;
        response.end(text);
        return;
      }
      default:
        response.writeHead(404);
        response.end();
    }
  };
  const server: Server = createServer(handle);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function init(overrides: Partial<UpstreamRequestInit> = {}): UpstreamRequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
    signal: new AbortController().signal,
    headersTimeoutMs: 30_000,
    bodyTimeoutMs: 30_000,
    ...overrides,
  };
}

/**
 * The behaviour every {@link UpstreamFetch} client must have (undici on Node, the platform fetch elsewhere): each
 * bound of the call enforced and reported as an UpstreamLimitError, the upstream call aborted when a bound is crossed
 * or the client goes away, and a streamed body read with backpressure, whole, however fast the upstream writes.
 */
export function testUpstreamFetch(
  name: string,
  create: () => UpstreamFetch,
  options: { bodyReader?: boolean } = {},
): void {
  // The ways a streamed body is read: `body` always, and `bodyReader()` for clients that offer one.
  const readings: { reading: string; open: (response: UpstreamResponse) => ChunkReader }[] = [
    { reading: 'body', open: (response) => (response.body as ReadableStream<Uint8Array>).getReader() },
  ];
  if (options.bodyReader === true)
    readings.push({
      reading: 'bodyReader()',
      open: (response) => {
        expect(response.bodyReader).toBeTypeOf('function');
        return response.bodyReader!();
      },
    });
  describe(`UpstreamFetch conformance: ${name}`, () => {
    let upstream: Awaited<ReturnType<typeof startTestUpstream>>;
    let upstreamFetch: UpstreamFetch;
    let sequence = 0;
    const at = (path: string): { url: string; id: string } => {
      const id = String(++sequence);
      return { url: `${upstream.url}${path}?id=${id}`, id };
    };

    beforeAll(async () => {
      upstream = await startTestUpstream();
      upstreamFetch = create();
    });
    afterAll(async () => {
      await upstream.close();
    });

    it('reads a small answer whole', async () => {
      const response = await upstreamFetch(at('/small').url, init());
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(await response.text(1024)).toBe('{"ok":true}');
    });

    it('rejects with headers-timeout when no headers arrive in time, and aborts the call', async () => {
      const { url, id } = at('/hang');
      const failure = await upstreamFetch(url, init({ headersTimeoutMs: 100 })).catch((error: unknown) => error);
      expect(isUpstreamLimitError(failure) && failure.limit).toBe('headers-timeout');
      expect((failure as Error).name).toBe('TimeoutError');
      await upstream.served.get(id)?.finished;
      expect(upstream.served.get(id)?.closedEarly).toBe(true);
    });

    it('rejects text() with body-timeout when the body stalls, and aborts the call', async () => {
      const { url, id } = at('/stall-body');
      const response = await upstreamFetch(url, init({ bodyTimeoutMs: 150 }));
      const failure = await response.text(1024).catch((error: unknown) => error);
      expect(isUpstreamLimitError(failure) && failure.limit).toBe('body-timeout');
      await upstream.served.get(id)?.finished;
      expect(upstream.served.get(id)?.closedEarly).toBe(true);
    });

    it('rejects text() with body-too-large past its cap, holding no more than it, and aborts the call', async () => {
      const { url, id } = at('/endless');
      const response = await upstreamFetch(url, init());
      const failure = await response.text(2 * megabyte).catch((error: unknown) => error);
      expect(isUpstreamLimitError(failure) && failure.limit).toBe('body-too-large');
      await upstream.served.get(id)?.finished;
      expect(upstream.served.get(id)?.closedEarly).toBe(true);
    });

    describe.each(readings)('a streamed body read through $reading', ({ open }) => {
      it('reads a streamed body with backpressure: an upstream writing endlessly is held while nobody reads', async () => {
        const { url, id } = at('/endless');
        const response = await upstreamFetch(url, init());
        const reader = open(response);
        await reader.read();
        // Give the upstream every chance to push more while the reader waits: it must stall on a full socket.
        const served = upstream.served.get(id) as ServedResponse;
        let last = -1;
        while (served.bytesWritten !== last) {
          last = served.bytesWritten;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        expect(served.bytesWritten).toBeLessThan(64 * megabyte);
        await reader.cancel();
        await served.finished;
        expect(served.closedEarly).toBe(true);
      });

      it('delivers every byte of a burst written at once', async () => {
        const { url, id } = at('/burst');
        const response = await upstreamFetch(url, init());
        const reader = open(response);
        let received = 0;
        let empty = 0;
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (value.byteLength === 0) empty++;
          received += value.byteLength;
          // A consumer that yields between reads, as the gateway does while it writes to its client.
          await new Promise((resolve) => setImmediate(resolve));
        }
        expect(received).toBe(upstream.served.get(id)?.bytesWritten);
        expect(empty).toBe(0);
      });

      it('aborts the upstream call when the client signal aborts mid-body', async () => {
        const controller = new AbortController();
        const { url, id } = at('/endless');
        const response = await upstreamFetch(url, init({ signal: controller.signal }));
        const reader = open(response);
        await reader.read();
        controller.abort(new Error('client went away'));
        await upstream.served.get(id)?.finished;
        expect(upstream.served.get(id)?.closedEarly).toBe(true);
        await reader.cancel().catch(() => undefined);
      });

      it('resolves a pending read as done when the reader is cancelled, and aborts the call', async () => {
        const { url, id } = at('/stall-body');
        const response = await upstreamFetch(url, init());
        const reader = open(response);
        expect(new TextDecoder().decode((await reader.read()).value)).toBe('{"partial":');
        const pending = reader.read();
        await reader.cancel(new Error('the gateway gave up on this upstream'));
        expect(await pending).toEqual({ done: true, value: undefined });
        await upstream.served.get(id)?.finished;
        expect(upstream.served.get(id)?.closedEarly).toBe(true);
      });
    });
  });
}
