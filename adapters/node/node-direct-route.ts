import { ServerResponse, type IncomingMessage } from 'node:http';
import type { DirectModelRoute } from '../../src/routes/direct-model-routes.ts';
import type { ModelReply } from '../../src/routes/gateway-responses.ts';
import type { HeaderReader, ModelRequestSource } from '../../src/routes/model-request-source.ts';
import { requestTooLarge } from '../../src/routes/model-request-source.ts';
import type { StreamPump } from '../../src/routes/transform-body.ts';

const textDecoder = new TextDecoder();
const clientGone = 'The client closed the connection before its body was complete.';
const writeHead = ServerResponse.prototype.writeHead;

/** The incoming message's headers by lower-case name; repeated ones joined with `, ` as `Headers` joins them. */
function incomingHeaders(incoming: IncomingMessage): HeaderReader {
  return {
    get(name) {
      const value = incoming.headers[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/**
 * The body as text, read straight from the socket: refused with the 413 at once when its declared length is over
 * the limit, else as soon as more than the limit arrived; decoded as a fetch Request's `text()` decodes (UTF-8, a
 * leading byte order mark dropped, invalid bytes replaced). A client that goes away first rejects it.
 */
function readIncomingText(
  incoming: IncomingMessage,
  limit: number,
  body: { whole: boolean },
): string | Promise<string> {
  const declared = incoming.headers['content-length'];
  if (declared !== undefined) {
    const length = Number(declared);
    if (length > limit) throw requestTooLarge(limit);
    const buffered = takeBufferedBody(incoming, length, body);
    if (buffered !== undefined) return buffered;
    // The usual case: the body came in the same read as the headers, but the route runs inside Node's 'request'
    // event, which the HTTP parser emits when the headers are complete and before it pushes the body. One microtask
    // later the parser is done with that read and the body is buffered: it is taken then, without the stream's
    // events (resume, 'data' and 'end', each a tick later), which cost ~30 us before a stream's first byte at
    // concurrency 1. A body still on its way (larger than a read, or sent slowly) is read by the events.
    if (incoming.readableLength === 0 && !incoming.readableDidRead) {
      return Promise.resolve().then(
        () => takeBufferedBody(incoming, length, body) ?? readByEvents(incoming, limit, body),
      );
    }
  }
  return readByEvents(incoming, limit, body);
}

/** The whole body as text when Node's parser has buffered all `length` declared bytes and nobody read any yet. */
function takeBufferedBody(incoming: IncomingMessage, length: number, body: { whole: boolean }): string | undefined {
  if (incoming.readableLength !== length || incoming.readableDidRead) return undefined;
  const buffered = incoming.read() as Buffer | null;
  body.whole = true;
  return buffered === null ? '' : textDecoder.decode(buffered);
}

/** The body as text from the message's events: the chunks as they come, refused once more than `limit` arrived. */
function readByEvents(incoming: IncomingMessage, limit: number, body: { whole: boolean }): Promise<string> {
  // Called a microtask after the 'request' event too: a message torn down in between (its socket destroyed by a
  // parse error in the same read) emits no more events, so it is refused here rather than waited for.
  if (incoming.destroyed) return Promise.reject(new Error(clientGone));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = (): void => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onFailure);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.byteLength;
      if (received > limit) {
        cleanup();
        reject(requestTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      body.whole = true;
      resolve(textDecoder.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    };
    const onFailure = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const onClose = (): void => {
      if (!incoming.complete) onFailure(new Error(clientGone));
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onFailure);
    incoming.on('close', onClose);
  });
}

/** How long, and how much of, an unread request body is read and dropped after its reply, before the connection closes. */
const discardMs = 500;
const discardMaxBytes = 64 * 1024 * 1024;

/**
 * The reply went out before the request body was read whole (a 401 before the body, a 413): the rest is read and
 * dropped so the connection can serve the next request, for at most {@link discardMs} and {@link discardMaxBytes};
 * past either the connection is closed. (Node would otherwise read all of it, however long it is.)
 */
function discardRest(incoming: IncomingMessage, body: { whole: boolean }): void {
  if (body.whole || incoming.complete || incoming.destroyed) return;
  let received = 0;
  const stop = (): void => {
    cleanup();
    incoming.socket.destroy();
  };
  const timer = setTimeout(stop, discardMs);
  timer.unref();
  const onData = (chunk: Buffer): void => {
    received += chunk.byteLength;
    if (received > discardMaxBytes) stop();
  };
  const cleanup = (): void => {
    clearTimeout(timer);
    incoming.off('data', onData);
    incoming.off('end', cleanup);
    incoming.off('error', cleanup);
    incoming.off('close', cleanup);
  };
  incoming.on('data', onData);
  incoming.on('end', cleanup);
  incoming.on('error', cleanup);
  incoming.on('close', cleanup);
  incoming.resume();
}

/** Resolves when the response can take more (`drain`), or is gone (`close`). */
function writable(outgoing: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      outgoing.off('drain', done);
      outgoing.off('close', done);
      resolve();
    };
    outgoing.on('drain', done);
    outgoing.on('close', done);
  });
}

/**
 * Writes a stream's steps to the response as they come. The headers wait for the first step, so they and the first
 * events leave in one write (on loopback every write costs a syscall and a wake-up); if the first step is not ready
 * by the end of this event-loop turn (an upstream slow to its first token), the headers go out alone then. A client
 * that goes away cancels the pump (the upstream call is aborted and the request accounted as the client's cancel).
 */
async function writeStream(reply: ModelReply, pump: StreamPump, outgoing: ServerResponse): Promise<void> {
  writeHead.call(outgoing, reply.status, reply.headers);
  let wrote = false;
  setImmediate(() => {
    if (!wrote && !outgoing.headersSent && !outgoing.destroyed) outgoing.flushHeaders();
  });
  const onClose = (): void => {
    if (!outgoing.writableFinished) void pump.cancel(new Error('The client closed the connection.'));
  };
  outgoing.on('close', onClose);
  try {
    for (;;) {
      const { value, done } = await pump.pull();
      wrote = true;
      if (outgoing.destroyed) return;
      if (done) {
        if (value === undefined) outgoing.end();
        else outgoing.end(value);
        return;
      }
      const more = value === undefined || outgoing.write(value);
      // The end work of the step just written (see DeferredEnd), before anything else can run.
      pump.delivered();
      if (!more) await writable(outgoing);
    }
  } catch (error) {
    // The transformer itself failed (a bug, never an upstream's doing): the stream cannot end well.
    outgoing.destroy(error instanceof Error ? error : new Error(String(error)));
  } finally {
    pump.delivered();
    outgoing.off('close', onClose);
  }
}

/**
 * Serves one model request on the Node server's direct path: the gateway's route (src/routes/direct-model-routes.ts)
 * reads the request straight from the incoming message and its reply is written straight to the response, with no
 * fetch Request, Response or Web stream in between (each costs allocations and promise hops on the hot path; together
 * they were most of the time the gateway added before a stream's first byte). A reply sent before the request body
 * was read whole (a 401, a 413) reads and drops a bounded rest of it ({@link discardRest}).
 *
 * @example
 * const route = directRoutes.post('/v1/chat/completions');
 * if (route !== undefined) return serveDirect(route, incoming, outgoing);
 */
export async function serveDirect(
  route: DirectModelRoute,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
): Promise<void> {
  const aborts = new AbortController();
  const onClose = (): void => {
    if (!outgoing.writableFinished) aborts.abort(new Error('The client closed the connection.'));
  };
  outgoing.once('close', onClose);
  const body = { whole: false };
  const source: ModelRequestSource = {
    headers: incomingHeaders(incoming),
    signal: aborts.signal,
    readText: (limit) => readIncomingText(incoming, limit, body),
  };
  let reply: ModelReply;
  try {
    reply = await route(source);
  } catch (error) {
    // The route renders every failure; this is only a bug in that rendering.
    outgoing.destroy(error instanceof Error ? error : new Error(String(error)));
    return;
  }
  discardRest(incoming, body);
  if (typeof reply.body === 'string') {
    if (!outgoing.destroyed) {
      const body = Buffer.from(reply.body);
      reply.headers['content-length'] = String(body.byteLength);
      writeHead.call(outgoing, reply.status, reply.headers);
      outgoing.end(body);
    }
    reply.afterSend?.();
    return;
  }
  if (outgoing.destroyed) {
    await reply.body.cancel(new Error('The client closed the connection.'));
    return;
  }
  await writeStream(reply, reply.body, outgoing);
}
