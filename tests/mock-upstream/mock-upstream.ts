import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { awsFrame } from '../../src/framing/aws-event-stream.test-helper.ts';
import { mockUpstreamApiKey, recognizeRequest } from './mock-upstream-routes.ts';
import { answerTokenRequest, isTokenRequest, type TokenRequest } from './mock-upstream-tokens.ts';

/**
 * The only fake in the test suite: an upstream model provider replaying the recorded fixtures that sit beside each
 * provider (`providers/<provider>/__fixtures__/<case>.json` and `<case>.chunks.txt`). The upstream model name picks
 * the case: `text`, `tools`, `error-429` ... Special models:
 * - `slow-stream`: the `text` stream, one event every 150 ms (to test client aborts mid-stream);
 * - `hang`: accepts the request and never answers (to test upstream timeouts);
 * - `broken-stream`: sends the first events of the `text` stream, then drops the connection.
 * `/v1/completions` and `/v1/responses` replay the mock's own fixtures (nothing translates those APIs, so no provider
 * holds them); `GET`/`DELETE /v1/responses/{id}` answer as OpenAI does for a response it keeps.
 * Anthropic's `/messages/count_tokens` answers `{"input_tokens": <the request body's length>}`.
 * It checks the credential each provider expects and records every request for assertions.
 */
export interface MockUpstream {
  url: string;
  /** Requests received, newest last. */
  requests: RecordedRequest[];
  /** Streams whose client went away before the mock finished sending. */
  abortedStreams: number;
  /** Token requests its OAuth endpoints answered (Google's JWT bearer grant, Entra's client credentials). */
  tokenRequests: TokenRequest[];
  close(): Promise<void>;
}

/** One request the mock received. */
export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export { mockAwsAccessKeyId, mockUpstreamApiKey } from './mock-upstream-routes.ts';

const providersDirectory = fileURLToPath(new URL('../../providers/', import.meta.url));

const ownFixturesDirectory = fileURLToPath(new URL('./__fixtures__/', import.meta.url));

/**
 * A recorded answer: a provider's fixture, or for the APIs only ever passed through (OpenAI's legacy
 * `/v1/completions` and its Responses API, which no translator reads, so their fixtures are not a provider's) one of
 * the mock's own `__fixtures__/completions-<case>` or `responses-<case>`.
 */
function fixture(provider: string, name: string): string | undefined {
  const path =
    provider === 'completions' || provider === 'responses'
      ? `${ownFixturesDirectory}${provider}-${name}`
      : `${providersDirectory}${provider}/__fixtures__/${name}`;
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, {
    'content-type': 'application/json',
    ...(status === 429 ? { 'retry-after': '7' } : {}),
    ...headers,
  });
  response.end(body);
}

/** The response headers a recorded error comes with (`__fixtures__/error-headers.json`: case -> headers), if any. */
function errorHeaders(provider: string, name: string): Record<string, string> {
  const recorded = fixture(provider, 'error-headers.json');
  if (recorded === undefined) return {};
  return (JSON.parse(recorded) as Record<string, Record<string, string>>)[name] ?? {};
}

/**
 * A recorded AWS event stream (`<case>.events.json`, `[{eventType | exceptionType, payload}]`) as the binary messages
 * Bedrock sends, in one body.
 */
function answerEventStream(response: ServerResponse, recorded: string | undefined, model: string): void {
  if (recorded === undefined) {
    sendJson(response, 404, JSON.stringify({ message: `mock: no event-stream fixture ${model}` }));
    return;
  }
  const events = JSON.parse(recorded) as { eventType?: string; exceptionType?: string; payload: unknown }[];
  response.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
  for (const event of events) {
    const frame =
      event.exceptionType === undefined
        ? awsFrame('event', event.eventType ?? '', JSON.stringify(event.payload))
        : awsFrame('exception', event.exceptionType, JSON.stringify(event.payload));
    response.write(frame);
  }
  response.end();
}

/** SSE events of a recorded `.chunks.txt` file, each with its trailing blank line. */
function splitEvents(text: string): string[] {
  return text
    .split(/\n\n/)
    .filter((event) => event.trim().length > 0)
    .map((event) => `${event}\n\n`);
}

/**
 * OpenAI's stored-response calls (`GET /v1/responses/{id}`, `.../input_items`, `DELETE`), as OpenAI answers them for
 * a response it keeps: the `text` case's response under the asked id, its one input item, or the deletion.
 */
function answerStoredResponse(request: IncomingMessage, response: ServerResponse, requests: RecordedRequest[]): void {
  const path = (request.url ?? '/').split('?')[0] as string;
  requests.push({ path, headers: request.headers, body: { method: request.method } });
  const match = /^\/v1\/responses\/([^/]+)(\/input_items)?$/.exec(path);
  if (request.headers.authorization !== `Bearer ${mockUpstreamApiKey}` || match === null) {
    sendJson(response, 404, JSON.stringify({ error: { message: 'mock: not found', type: 'invalid_request_error' } }));
    return;
  }
  const id = decodeURIComponent(match[1] as string);
  if (request.method === 'DELETE') {
    sendJson(response, 200, JSON.stringify({ id, object: 'response', deleted: true }));
    return;
  }
  if (match[2] !== undefined) {
    const item = {
      id: 'msg_mock_input_0',
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'Hi' }],
    };
    sendJson(
      response,
      200,
      JSON.stringify({ object: 'list', data: [item], first_id: item.id, last_id: item.id, has_more: false }),
    );
    return;
  }
  const stored = JSON.parse(fixture('responses', 'text.json') ?? '{}') as Record<string, unknown>;
  sendJson(response, 200, JSON.stringify({ ...stored, id }));
}

/** Starts the mock on a free loopback port. */
export async function startMockUpstream(): Promise<MockUpstream> {
  const state = { requests: [] as RecordedRequest[], abortedStreams: 0, tokenRequests: [] as TokenRequest[] };
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer(async (request, response) => {
    const text = await readBody(request);
    if (request.method === 'GET' || request.method === 'DELETE') {
      answerStoredResponse(request, response, state.requests);
      return;
    }
    if (isTokenRequest(request.url ?? '/')) {
      answerTokenRequest(request, text, response, state);
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      sendJson(
        response,
        400,
        JSON.stringify({
          error: { message: 'mock: body is not JSON', type: 'invalid_request_error', param: null, code: null },
        }),
      );
      return;
    }
    const path = (request.url ?? '/').split('?')[0] as string;
    state.requests.push({ path, headers: request.headers, body });
    const recognized = recognizeRequest(request.url ?? '/', request.headers, body);
    const provider = recognized.fixtures;
    if (!recognized.authorized) {
      const [folder = '', name = ''] = recognized.unauthorizedFixture.split('/');
      sendJson(response, Number(/error-(\d{3})/.exec(name)?.[1] ?? 401), fixture(folder, `${name}.json`) ?? '{}');
      return;
    }
    let model = recognized.model;
    if (path.endsWith('/messages/count_tokens')) {
      // Anthropic's answer shape; the count is the mock's own (the request's JSON length), so tests can tell it apart.
      if (model.startsWith('error-'))
        sendJson(response, Number(model.slice(6, 9)), fixture(provider, `${model}.json`) ?? '{}');
      else sendJson(response, 200, JSON.stringify({ input_tokens: text.length }));
      return;
    }
    if (model === 'hang') {
      hanging.add(response);
      response.once('close', () => hanging.delete(response));
      return;
    }
    const slow = model === 'slow-stream';
    const broken = model === 'broken-stream';
    if (slow || broken) model = 'text';
    if (model.startsWith('error-')) {
      sendJson(
        response,
        Number(model.slice(6, 9)),
        fixture(provider, `${model}.json`) ?? '{}',
        errorHeaders(provider, model),
      );
      return;
    }
    if (recognized.stream) {
      if (recognized.framing === 'aws-event-stream') {
        answerEventStream(response, fixture(provider, `${model}.events.json`), model);
        return;
      }
      const chunks = fixture(provider, `${model}.chunks.txt`);
      if (chunks === undefined) {
        sendJson(
          response,
          404,
          JSON.stringify({
            error: {
              message: `mock: no stream fixture ${model}`,
              type: 'invalid_request_error',
              param: 'model',
              code: null,
            },
          }),
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const events = splitEvents(chunks);
      if (broken) {
        response.write(events.slice(0, 2).join(''));
        setTimeout(() => response.destroy(), 50);
        return;
      }
      if (!slow) {
        response.end(events.join(''));
        return;
      }
      let index = 0;
      const timer = setInterval(() => {
        if (index < events.length) response.write(events[index++]);
        else {
          clearInterval(timer);
          response.end();
        }
      }, 150);
      response.once('close', () => {
        if (index < events.length) state.abortedStreams++;
        clearInterval(timer);
      });
      return;
    }
    const json = fixture(provider, `${model}.json`);
    if (json === undefined) {
      sendJson(
        response,
        404,
        JSON.stringify({
          error: { message: `mock: no fixture ${model}`, type: 'invalid_request_error', param: 'model', code: null },
        }),
      );
      return;
    }
    sendJson(response, 200, json);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    get abortedStreams() {
      return state.abortedStreams;
    },
    get tokenRequests() {
      return state.tokenRequests;
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
