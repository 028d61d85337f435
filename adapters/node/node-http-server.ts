import { getRequestListener } from '@hono/node-server';
import { createServer, ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';

/** How a Node HTTP server serving the gateway is started. */
export interface NodeHttpServerOptions {
  fetch: (request: Request) => Response | Promise<Response>;
  port: number;
  hostname?: string;
  /** How long in-flight requests (streams included) may take to finish after SIGTERM, ms. */
  shutdownGraceMs: number;
}

/** A running server and its graceful stop. */
export interface NodeHttpServer {
  server: Server;
  /** Whether the server still takes new requests (false once draining). */
  isAccepting(): boolean;
  /** Stops accepting, waits for in-flight requests up to the grace period, then closes every connection. */
  drain(): Promise<{ unfinished: number }>;
}

function isEventStream(headers: unknown): boolean {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return false;
  const contentType =
    (headers as Record<string, unknown>)['content-type'] ?? (headers as Record<string, unknown>)['Content-Type'];
  return typeof contentType === 'string' && contentType.startsWith('text/event-stream');
}

function uncork(socket: Socket): void {
  socket.uncork();
}

/**
 * The gateway's ServerResponse. For event streams it holds the socket's writes from the status line until the end
 * of this event-loop turn, so the headers, the first events and (for short streams) the final chunk leave in one
 * write instead of three: the response listener flushes stream headers as soon as it has them, and on loopback every
 * write costs a syscall and a wake-up. Other responses are written whole by `end()` already and are left alone.
 * (A subclass rather than a per-request wrapper: nothing is allocated per request.)
 */
class GatewayServerResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  override writeHead(...parameters: unknown[]): this {
    const socket = this.socket;
    if (socket !== null && (isEventStream(parameters[1]) || isEventStream(parameters[2]))) {
      socket.cork();
      setImmediate(uncork, socket);
    }
    return (super.writeHead as (...values: unknown[]) => this)(...parameters);
  }
}

/**
 * Serves a fetch handler over node:http through @hono/node-server's request listener, counting in-flight requests
 * so a drain can wait for them.
 *
 * @example
 * const running = await startNodeHttpServer({ fetch: gateway.fetch, port: 8787, shutdownGraceMs: 25_000 });
 * process.once('SIGTERM', async () => { await running.drain(); process.exit(0); });
 */
export async function startNodeHttpServer(options: NodeHttpServerOptions): Promise<NodeHttpServer> {
  const listener = getRequestListener(options.fetch);
  let inFlight = 0;
  let accepting = true;
  let onIdle: (() => void) | undefined;
  const onResponseClose = (): void => {
    inFlight--;
    if (inFlight === 0 && onIdle !== undefined) onIdle();
  };
  const server = createServer(
    { keepAliveTimeout: 65_000, requestTimeout: 0, ServerResponse: GatewayServerResponse },
    (incoming, outgoing) => {
      inFlight++;
      if (!accepting) outgoing.setHeader('connection', 'close');
      outgoing.once('close', onResponseClose);
      void listener(incoming, outgoing);
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.hostname, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    isAccepting: () => accepting,
    async drain() {
      accepting = false;
      server.close();
      server.closeIdleConnections();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, options.shutdownGraceMs);
          onIdle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      const unfinished = inFlight;
      server.closeAllConnections();
      return { unfinished };
    },
  };
}
