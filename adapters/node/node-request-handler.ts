import { getRequestListener } from '@hono/node-server';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What the handler needs of an app: its fetch (a Hono app, such as `createGateway(...)`). */
export interface FetchApplication {
  fetch(request: Request): Response | Promise<Response>;
}

/** A request as body parsers leave it: Express's `express.json()` and others set `body`, some set `rawBody`. */
type ParsedIncomingMessage = IncomingMessage & { body?: unknown; rawBody?: unknown };

/**
 * The body of a request a body parser has already read, as bytes: its `rawBody` when it kept one, else `body` again
 * (a Buffer or string as is, parsed JSON serialised back). Undefined when the stream is unread (the usual case).
 */
function bodyReadBefore(incoming: ParsedIncomingMessage): Buffer | undefined {
  if (Buffer.isBuffer(incoming.rawBody)) return undefined; // @hono/node-server reads rawBody itself
  if (!incoming.readableEnded || incoming.body === undefined) return undefined;
  const { body } = incoming;
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string') return Buffer.from(body);
  return Buffer.from(JSON.stringify(body));
}

/** `rawHeaders` (name, value, name, value ...) with `content-length` set to `length` and no `transfer-encoding`. */
function withContentLength(rawHeaders: string[], length: number): string[] {
  const kept: string[] = [];
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = (rawHeaders[index] as string).toLowerCase();
    if (name === 'content-length' || name === 'transfer-encoding') continue;
    kept.push(rawHeaders[index] as string, rawHeaders[index + 1] as string);
  }
  kept.push('content-length', String(length));
  return kept;
}

/**
 * A `node:http` request handler for the gateway (or any Hono app): for `http.createServer(handler)`, Express's
 * `app.use('/llm', handler)` and Fastify's `reply.hijack()` routes. Streams go out as they come, with backpressure;
 * a client that disconnects cancels the upstream call.
 *
 * Body parsers: mount the gateway before `express.json()` and the like, so it reads the body itself with its own
 * limits (Express's default JSON limit is 100 KB, too small for images). When a parser ran first anyway, the handler
 * takes its result (`rawBody`, or `body` serialised back to JSON) instead of answering every POST with a 400.
 *
 * @example
 * import express from 'express';
 * import { createGateway } from 'torii-gateway';
 * import { createNodeRequestHandler } from 'torii-gateway/node';
 *
 * const app = express();
 * app.use('/llm', createNodeRequestHandler(createGateway(config, { masterKey, environment: process.env })));
 * app.use(express.json()); // after the gateway
 */
export function createNodeRequestHandler(
  application: FetchApplication,
): (incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void> {
  const listener = getRequestListener((request) => application.fetch(request), { overrideGlobalObjects: false });
  return (incoming, outgoing) => {
    const parsed = incoming as ParsedIncomingMessage;
    const body = bodyReadBefore(parsed);
    if (body !== undefined) {
      Object.defineProperty(parsed, 'rawBody', { value: body, configurable: true });
      // The parser's bytes may differ from what the client sent (JSON serialised back): declare the ones sent on.
      parsed.rawHeaders = withContentLength(parsed.rawHeaders, body.byteLength);
    }
    return listener(incoming, outgoing);
  };
}
