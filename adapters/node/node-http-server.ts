import { getRequestListener } from '@hono/node-server';
import { createServer, ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { DirectModelRoute, DirectModelRoutes } from '../../src/routes/direct-model-routes.ts';
import { StartupError, systemErrorCode } from '../shared/startup-error.ts';
import { serveDirect } from './node-direct-route.ts';
import { nodeServerDefaults } from './node-environment.ts';

/** How a Node HTTP server serving the gateway is started. */
export interface NodeHttpServerOptions {
  fetch: (request: Request) => Response | Promise<Response>;
  port: number;
  hostname?: string;
  /** How long in-flight requests (streams included) may take to finish after SIGTERM, ms. */
  shutdownGraceMs: number;
  /** Client timeouts and the connection cap (see {@link NodeHttpLimits}); default {@link defaultNodeHttpLimits}. */
  limits?: NodeHttpLimits;
  /**
   * The gateway's model routes served without `fetch` (see gatewayDirectRoutes in src/gateway.ts and
   * node-direct-route.ts): a POST to one of their paths goes straight to its route; everything else to `fetch`.
   */
  directRoutes?: DirectModelRoutes;
}

/**
 * What a client may hold of the server. Node applies the first two only while a request is being received, so a
 * response that keeps streaming for minutes is never cut; once the response is sent, the keep-alive timeout applies.
 */
export interface NodeHttpLimits {
  /** Time to send the request line and every header, from the first byte or the connection's start, ms. */
  headersTimeoutMs: number;
  /** Time to send the whole request, body included, ms (at least `headersTimeoutMs`). */
  requestTimeoutMs: number;
  /** How long an idle connection is kept open after a response, waiting for the next request, ms. */
  keepAliveTimeoutMs: number;
  /** Most open connections; a new one past it is closed at once, without a response. */
  maxConnections: number;
}

/** A running server and its graceful stop. */
export interface NodeHttpServer {
  server: Server;
  /** Whether the server still takes new requests (false once draining). */
  isAccepting(): boolean;
  /** Stops accepting, waits for in-flight requests up to the grace period, then closes every connection. */
  drain(): Promise<{ unfinished: number }>;
}

/** The limits `node dist/server.js` applies unless the environment says otherwise (see node-environment.ts). */
export const defaultNodeHttpLimits: NodeHttpLimits = {
  headersTimeoutMs: nodeServerDefaults.headersTimeoutMs,
  requestTimeoutMs: nodeServerDefaults.requestTimeoutMs,
  keepAliveTimeoutMs: nodeServerDefaults.keepAliveTimeoutMs,
  maxConnections: nodeServerDefaults.maxConnections,
};

/** A failed `listen` as the setting to fix: PORT (in use, privileged) or HOST (not an address of this machine). */
function listenFailure(error: unknown, port: number, hostname: string | undefined): Error {
  const code = systemErrorCode(error);
  const where = hostname === undefined ? `port ${port}` : `port ${port} on ${hostname}`;
  if (code === 'EADDRINUSE') return new StartupError('PORT', `${where} is already in use`, { cause: error });
  if (code === 'EACCES')
    return new StartupError('PORT', `permission denied to listen on ${where} (ports below 1024 need privileges)`, {
      cause: error,
    });
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new StartupError('HOST', `cannot listen on "${hostname}": not an address of this machine (${code})`, {
      cause: error,
    });
  return error instanceof Error ? error : new Error(String(error));
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
  const directRoutes = options.directRoutes;
  /** The direct route of a POST in origin form (`/v1/...`) to a model path, or undefined. */
  const directRoute = (incoming: IncomingMessage): DirectModelRoute | undefined => {
    if (directRoutes === undefined || incoming.method !== 'POST') return undefined;
    const url = incoming.url ?? '';
    if (url.charCodeAt(0) !== 0x2f) return undefined;
    const query = url.indexOf('?');
    return directRoutes.post(query < 0 ? url : url.slice(0, query));
  };
  let inFlight = 0;
  let accepting = true;
  let onIdle: (() => void) | undefined;
  const onResponseClose = (): void => {
    inFlight--;
    if (inFlight === 0 && onIdle !== undefined) onIdle();
  };
  const limits = options.limits ?? defaultNodeHttpLimits;
  const server = createServer(
    {
      ServerResponse: GatewayServerResponse,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks the two request timeouts on this interval (30 s by default, which would let a client overstay a
      // short timeout by up to 30 s); each check walks only the connections still sending a request.
      connectionsCheckingInterval: Math.max(
        100,
        Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)),
      ),
    },
    (incoming, outgoing) => {
      inFlight++;
      if (!accepting) outgoing.setHeader('connection', 'close');
      outgoing.once('close', onResponseClose);
      const route = directRoute(incoming);
      if (route !== undefined) void serveDirect(route, incoming, outgoing);
      else void listener(incoming, outgoing);
    },
  );
  server.maxConnections = limits.maxConnections;
  // In a cluster the primary accepts and hands connections to workers; without this, one a full worker refuses goes
  // back to the primary and round to the next worker, and bounces between full workers until a slot frees. With it,
  // the worker closes it at once, as a single process does.
  // (Node >= 22.12; not in @types/node yet.)
  (server as Server & { dropMaxConnection?: boolean }).dropMaxConnection = true;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(listenFailure(error, options.port, options.hostname)));
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
