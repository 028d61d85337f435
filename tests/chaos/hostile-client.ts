import { connect, type Socket } from 'node:net';

/**
 * Misbehaving HTTP clients for the chaos suite, over raw sockets (node:net), so nothing in a client library hides
 * what they send: a slowloris trickling header lines, a client that connects and says nothing, a body trickled a
 * byte at a time, a giant header. Each returns a {@link HostileConnection} whose `closed` resolves when the server
 * closes the connection, with how long that took and what the server sent before it did.
 */
export interface HostileConnection {
  socket: Socket;
  /** Resolves when the connection closes: after how many ms (from connect), and every byte the server sent. */
  closed: Promise<ClosedConnection>;
  /** Stops what the client trickles and destroys the socket (teardown). */
  destroy(): void;
}

/** How a hostile connection ended. */
export interface ClosedConnection {
  afterMs: number;
  received: string;
}

function hostPort(baseURL: string): { host: string; port: number } {
  const url = new URL(baseURL);
  return { host: url.hostname, port: Number(url.port) };
}

/** Opens a raw connection; `behave` starts what the client does once connected and returns how to stop it. */
export function openHostileConnection(baseURL: string, behave: (socket: Socket) => () => void): HostileConnection {
  const { host, port } = hostPort(baseURL);
  const started = performance.now();
  const socket = connect(port, host);
  socket.setNoDelay(true);
  let received = '';
  let stop: () => void = () => {};
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  // A reset (ECONNRESET) is as much a close as a FIN here; 'close' follows either way.
  socket.on('error', () => {});
  socket.once('connect', () => (stop = behave(socket)));
  const closed = new Promise<ClosedConnection>((resolve) =>
    socket.once('close', () => {
      stop();
      resolve({ afterMs: performance.now() - started, received });
    }),
  );
  return {
    socket,
    closed,
    destroy() {
      stop();
      socket.destroy();
    },
  };
}

function trickle(socket: Socket, intervalMs: number, next: () => string | undefined): () => void {
  const timer = setInterval(() => {
    const text = next();
    if (text === undefined || socket.destroyed) return clearInterval(timer);
    socket.write(text);
  }, intervalMs);
  return () => clearInterval(timer);
}

/** A slowloris: a request line, then one more header line every `intervalMs`, never the blank line. */
export function slowlorisClient(baseURL: string, intervalMs = 200): HostileConnection {
  return openHostileConnection(baseURL, (socket) => {
    socket.write('GET /health/live HTTP/1.1\r\nHost: torii\r\n');
    let line = 0;
    return trickle(socket, intervalMs, () => `X-Slow-${line++}: ${'a'.repeat(8)}\r\n`);
  });
}

/** Connects and never sends a byte. */
export function idleClient(baseURL: string): HostileConnection {
  return openHostileConnection(baseURL, () => () => {});
}

/**
 * Sends complete headers of a POST announcing `contentLength` body bytes, then one body byte every `intervalMs`
 * (1 byte/s by default).
 */
export function bodyTrickleClient(
  baseURL: string,
  options: { path: string; headers?: Record<string, string>; contentLength?: number; intervalMs?: number },
): HostileConnection {
  const contentLength = options.contentLength ?? 10_000;
  return openHostileConnection(baseURL, (socket) => {
    const headers = Object.entries({ ...options.headers, 'content-type': 'application/json' })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(`POST ${options.path} HTTP/1.1\r\nHost: torii\r\n${headers}Content-Length: ${contentLength}\r\n\r\n{`);
    let sent = 1;
    return trickle(socket, options.intervalMs ?? 1_000, () => (sent++ < contentLength ? ' ' : undefined));
  });
}

/** One complete keep-alive request, then silence with the connection left open. */
export function keepAliveIdleClient(baseURL: string): HostileConnection {
  return openHostileConnection(baseURL, (socket) => {
    socket.write('GET /health/live HTTP/1.1\r\nHost: torii\r\nConnection: keep-alive\r\n\r\n');
    return () => {};
  });
}

/** A request whose one header is `bytes` long. */
export function giantHeaderClient(baseURL: string, bytes: number): HostileConnection {
  return openHostileConnection(baseURL, (socket) => {
    socket.write(`GET /health/live HTTP/1.1\r\nHost: torii\r\nX-Giant: ${'g'.repeat(bytes)}\r\n\r\n`);
    return () => {};
  });
}

/**
 * Waits for a hostile connection to be closed by the server, failing after `limitMs` (generous: the bound under test
 * is asserted separately on `afterMs`).
 */
export async function closedWithin(connection: HostileConnection, limitMs: number): Promise<ClosedConnection> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      connection.destroy();
      reject(new Error(`the server kept the connection open for more than ${limitMs} ms`));
    }, limitMs);
  });
  try {
    return await Promise.race([connection.closed, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** The status code of the first response the server sent on a connection, if any. */
export function firstStatus(received: string): number | undefined {
  const match = /^HTTP\/1\.1 (\d{3})/.exec(received);
  return match === null ? undefined : Number(match[1]);
}
