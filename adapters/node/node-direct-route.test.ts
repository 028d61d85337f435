import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinProviders } from '../../providers/index.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { createGateway, gatewayDirectRoutes } from '../../src/gateway.ts';
import { mockUpstreamApiKey, startMockUpstream, type MockUpstream } from '../../tests/mock-upstream/mock-upstream.ts';
import { startNodeHttpServer, type NodeHttpServer } from './node-http-server.ts';
import { createUndiciUpstreamFetch } from './undici-upstream-fetch.ts';

const masterKey = 'sk-torii-direct-route-test-key';
const bodyLimitBytes = 64 * 1024;

/** Reads one HTTP/1.1 response off a raw socket: status, lower-case headers, body (content-length or chunked). */
function readResponse(socket: Socket): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const lines = received.subarray(0, headEnd).toString('latin1').split('\r\n');
      const status = Number(lines[0]!.split(' ')[1]);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      const rest = received.subarray(headEnd + 4);
      const length = Number(headers['content-length']);
      if (!Number.isNaN(length)) {
        if (rest.length < length) return;
        finish({ status, headers, body: rest.subarray(0, length).toString('utf8') });
      } else if (rest.includes('0\r\n\r\n')) {
        let body = '';
        let at = 0;
        for (;;) {
          const sizeEnd = rest.indexOf('\r\n', at);
          const size = parseInt(rest.subarray(at, sizeEnd).toString('latin1'), 16);
          if (size === 0) break;
          body += rest.subarray(sizeEnd + 2, sizeEnd + 2 + size).toString('utf8');
          at = sizeEnd + 2 + size + 2;
        }
        finish({ status, headers, body });
      }
    };
    const onClose = (): void => reject(new Error(`closed after ${received.length} bytes`));
    const finish = (value: { status: number; headers: Record<string, string>; body: string }): void => {
      socket.off('data', onData);
      socket.off('close', onClose);
      resolve(value);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}

function requestHead(path: string, headers: Record<string, string | number>): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return `POST ${path} HTTP/1.1\r\nhost: localhost\r\n${lines.join('\r\n')}\r\n\r\n`;
}

/** A whole chat request as raw text, with its declared length. */
const chatRequest = (body: string, authorization = `Bearer ${masterKey}`): string =>
  requestHead('/v1/chat/completions', {
    authorization,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  }) + body;

const chatBody = (extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ model: 'gpt-text', messages: [{ role: 'user', content: 'Hi' }], ...extra });

describe('the Node server direct path for model routes', () => {
  let upstream: MockUpstream;
  let running: NodeHttpServer;
  let baseURL: string;
  const fetchedPaths: string[] = [];

  beforeAll(async () => {
    upstream = await startMockUpstream();
    const app = createGateway({
      config: parseGatewayConfig({
        server: { bodyLimitBytes },
        modelGroups: {
          'gpt-text': {
            deployments: [
              { provider: 'openai', model: 'text', baseURL: `${upstream.url}/v1`, apiKey: mockUpstreamApiKey },
            ],
          },
          'gpt-slow': {
            deployments: [
              { provider: 'openai', model: 'slow-stream', baseURL: `${upstream.url}/v1`, apiKey: mockUpstreamApiKey },
            ],
          },
        },
      }),
      providers: builtinProviders,
      authenticator: createMasterKeyAuthenticator(masterKey),
      services: { upstreamFetch: createUndiciUpstreamFetch() },
    });
    running = await startNodeHttpServer({
      fetch: (request) => {
        fetchedPaths.push(new URL(request.url).pathname);
        return app.fetch(request);
      },
      directRoutes: gatewayDirectRoutes(app),
      port: 0,
      hostname: '127.0.0.1',
      shutdownGraceMs: 1_000,
    });
    const address = running.server.address() as { port: number };
    baseURL = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    await running.drain();
    await upstream.close();
  });

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${baseURL}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json', ...headers },
      body,
    });

  it('serves the model routes itself (query strings included) and hands everything else to the fetch handler', async () => {
    fetchedPaths.length = 0;
    const answer = await post('/v1/chat/completions?trace=1', chatBody(), { 'x-request-id': 'client-id-1' });
    expect(answer.status).toBe(200);
    const text = await answer.text();
    expect(JSON.parse(text).object).toBe('chat.completion');
    expect(answer.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(answer.headers.get('x-request-id')).toBe('client-id-1');
    expect(answer.headers.get('x-torii-request-id')).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(answer.headers.get('server-timing')).toMatch(/^gateway;dur=[\d.]+, upstream;dur=[\d.]+$/);
    expect(fetchedPaths).toEqual([]);
    const models = await fetch(`${baseURL}/v1/models`, { headers: { authorization: `Bearer ${masterKey}` } });
    expect(models.status).toBe(200);
    const wrongMethod = await fetch(`${baseURL}/v1/chat/completions`, {
      headers: { authorization: `Bearer ${masterKey}` },
    });
    expect(wrongMethod.status).toBe(405);
    expect(fetchedPaths).toEqual(['/v1/models', '/v1/chat/completions']);
  });

  it('streams the answer as events ending with [DONE], with the timing headers', async () => {
    const answer = await post('/v1/chat/completions', chatBody({ stream: true }));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(answer.headers.get('x-torii-request-id')).not.toBeNull();
    const text = await answer.text();
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(text).toContain('"chat.completion.chunk"');
  });

  it("renders failures in the client's envelope: Anthropic's for /v1/messages, OpenAI's elsewhere", async () => {
    const anthropic = await post('/v1/messages', '{}', { authorization: 'Bearer wrong' });
    expect(anthropic.status).toBe(401);
    expect(anthropic.headers.get('request-id')).toBe(anthropic.headers.get('x-torii-request-id'));
    expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const openai = await post('/v1/chat/completions', '{"model":');
    expect(openai.status).toBe(400);
    expect(await openai.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_json' } });
  });

  it('reads a body the way a fetch Request does: a leading byte order mark is dropped', async () => {
    const answer = await post('/v1/chat/completions', `\uFEFF${chatBody()}`);
    expect(answer.status).toBe(200);
  });

  it('takes a body that came in the same read as its headers from the buffer, without the stream events', async () => {
    // The route runs inside the 'request' event, before the parser pushes the body: read a microtask later, the
    // body is taken from the message's buffer and the message never switches to flowing mode.
    const flowing: (boolean | null)[] = [];
    const watch = (incoming: import('node:http').IncomingMessage, outgoing: import('node:http').ServerResponse) =>
      outgoing.once('finish', () => flowing.push(incoming.readableFlowing));
    running.server.prependListener('request', watch);
    try {
      const socket = connect(Number(new URL(baseURL).port), '127.0.0.1');
      const answer = readResponse(socket);
      socket.write(chatRequest(chatBody()));
      const { status, body } = await answer;
      expect(status).toBe(200);
      expect(JSON.parse(body).object).toBe('chat.completion');
      // A second request on the same connection is read the same way.
      const second = readResponse(socket);
      socket.write(chatRequest(chatBody({ user: 'second' })));
      expect((await second).status).toBe(200);
      socket.destroy();
      expect(flowing).toEqual([null, null]);
    } finally {
      running.server.off('request', watch);
    }
  });

  it('serves pipelined requests that came in one write, each with its own body, in order', async () => {
    const socket = connect(Number(new URL(baseURL).port), '127.0.0.1');
    const users = ['first', 'second', 'third'];
    // The answers may arrive in one read: they are split by their content-length here, not by reads.
    const answers = await new Promise<{ status: number; body: string }[]>((resolve, reject) => {
      let received = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        const parsed: { status: number; body: string }[] = [];
        let at = 0;
        for (;;) {
          const headEnd = received.indexOf('\r\n\r\n', at);
          if (headEnd < 0) break;
          const head = received.subarray(at, headEnd).toString('latin1');
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
          if (Number.isNaN(length) || received.length < headEnd + 4 + length) break;
          parsed.push({
            status: Number(head.split(' ')[1]),
            body: received.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8'),
          });
          at = headEnd + 4 + length;
        }
        if (parsed.length === users.length) resolve(parsed);
      });
      socket.once('close', () => reject(new Error('closed before three answers')));
      socket.write(users.map((user) => chatRequest(chatBody({ user }))).join(''));
    });
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    for (const answer of answers) expect(JSON.parse(answer.body).object).toBe('chat.completion');
    socket.destroy();
  });

  it('closes a connection whose request is followed by bytes that are not HTTP in the same write, and serves on', async () => {
    // Node answers the parse error (400) and destroys the socket, which may happen before the route reads the body:
    // the request must neither hang nor take the server down.
    const socket = connect(Number(new URL(baseURL).port), '127.0.0.1');
    socket.on('error', () => {});
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(chatRequest(chatBody()) + 'NOT HTTP AT ALL\r\n\r\n');
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 (200|400) /);
    expect((await post('/v1/chat/completions', chatBody())).status).toBe(200);
  });

  it('reads a body that arrives after its headers, in pieces', async () => {
    const socket = connect(Number(new URL(baseURL).port), '127.0.0.1');
    const body = chatBody();
    socket.write(
      requestHead('/v1/chat/completions', {
        authorization: `Bearer ${masterKey}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      }),
    );
    const answer = readResponse(socket);
    for (const piece of [body.slice(0, 10), body.slice(10, 40), body.slice(40)]) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      socket.write(piece);
    }
    const { status, body: text } = await answer;
    expect(status).toBe(200);
    expect(JSON.parse(text).object).toBe('chat.completion');
    socket.destroy();
  });

  it('refuses a body over the limit with a 413, declared or chunked, and keeps the connection serving', async () => {
    const socket = connect(Number(new URL(baseURL).port), '127.0.0.1');
    const oversized = 'x'.repeat(bodyLimitBytes + 1);
    socket.write(
      requestHead('/v1/chat/completions', {
        authorization: `Bearer ${masterKey}`,
        'content-type': 'application/json',
        'content-length': oversized.length,
      }) + oversized,
    );
    const declared = await readResponse(socket);
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toMatchObject({ error: { code: 'request_too_large' } });
    const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
    socket.write(
      requestHead('/v1/chat/completions', {
        authorization: `Bearer ${masterKey}`,
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
      }) +
        chunk(oversized.slice(0, bodyLimitBytes / 2)) +
        chunk(oversized.slice(bodyLimitBytes / 2)) +
        '0\r\n\r\n',
    );
    const chunked = await readResponse(socket);
    expect(chunked.status).toBe(413);
    socket.write(chatRequest(chatBody()));
    expect((await readResponse(socket)).status).toBe(200);
    socket.destroy();
  });

  it('answers a wrong key before its body has arrived, then reads the rest and serves the next request', async () => {
    const socket = connect(Number(new URL(baseURL).port), '127.0.0.1');
    const body = chatBody({ padding: 'p'.repeat(32 * 1024) });
    const half = Math.floor(body.length / 2);
    socket.write(chatRequest(body, 'Bearer wrong').slice(0, -(body.length - half)));
    const refused = await readResponse(socket);
    expect(refused.status).toBe(401);
    socket.write(body.slice(half));
    socket.write(chatRequest(chatBody()));
    expect((await readResponse(socket)).status).toBe(200);
    socket.destroy();
  });

  it('closes a connection whose unread body stops arriving after its reply', async () => {
    const socket = connect(Number(new URL(baseURL).port), '127.0.0.1');
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.write(
      requestHead('/v1/chat/completions', {
        authorization: 'Bearer wrong',
        'content-type': 'application/json',
        'content-length': 1_000_000,
      }) + '{"model":',
    );
    expect((await readResponse(socket)).status).toBe(401);
    await closed;
  });

  it('aborts the upstream call when the client goes away mid-stream', async () => {
    const before = upstream.abortedStreams;
    const controller = new AbortController();
    const answer = await fetch(`${baseURL}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-slow', stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
      signal: controller.signal,
    });
    const reader = answer.body!.getReader();
    await reader.read();
    controller.abort();
    await expect.poll(() => upstream.abortedStreams, { timeout: 10_000 }).toBeGreaterThan(before);
  });
});
