import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { waitFor } from '../e2e/accounting-harness.ts';

/**
 * A misbehaving upstream model provider for the chaos suite. It speaks OpenAI chat completions (`.../chat/completions`)
 * and Anthropic Messages (`.../messages`), building every body from the recorded fixtures beside each provider, so
 * what it sends is shaped exactly like the provider's documented wire format; only the behaviour is hostile.
 *
 * The upstream model name picks the behaviour, `name` or `name:argument`:
 * - `text`: a normal answer (JSON or stream);
 * - `burst:N`: a stream of N content deltas written in one burst (the whole stream in one write);
 * - `big-write:MB`: a stream of about MB megabytes of content deltas, in one write;
 * - `hang`: accepts the request and never sends headers;
 * - `stall-body`: JSON answers send headers and half the body, streams send their first events, then nothing;
 * - `huge:MB`: a 200 whose JSON body (or stream) is MB megabytes long;
 * - `huge-error:MB`: a 500 whose body is MB megabytes long;
 * - `html`: a 200 with an HTML page; `error-in-200`: a 200 whose JSON body is an error object;
 * - `truncated`: a 200 whose JSON is cut off; `gzip`: a 200 of gzip bytes labelled `application/json`;
 * - `json-for-stream`: a stream request answered with a plain JSON completion;
 * - `no-end`: a stream that ends cleanly but without its final event (`[DONE]` / `message_stop`);
 * - `hang-after-end`: a whole stream, final event included (three content deltas), after which the upstream holds its
 *   connection open and never ends its body; a plain JSON answer without `stream`;
 * - `reset-after-end`: the same whole stream, after which the upstream resets its connection instead of ending its
 *   body (no chunked terminator); a plain JSON answer without `stream`;
 * - `disconnect:K`: a stream that sends K content deltas, then drops the connection;
 * - `absurd-usage`: a normal answer reporting 1e300 tokens;
 * - `deep-json:N`: a 200 JSON answer whose tool call input (Anthropic) or an extra field (OpenAI) nests N levels deep;
 *   streamed (Anthropic only), a tool_use block whose `content_block_start` input does;
 * - `echo-key:STATUS`: an error with STATUS whose message quotes the credential the gateway presented;
 * - `stream-echo-key`: a 200 stream whose first events, a content delta and then the dialect's own error event quoting
 *   the credential the gateway presented come in one write, framed exactly as a relay frames them (so a same-dialect
 *   relay that forwards unchanged bytes must notice the error and redact it); a plain JSON answer without `stream`;
 * - `error:STATUS`: the provider's recorded error body with that status;
 * - `reset`: resets the connection before sending anything;
 * - `stall-headers`: sends a 200's headers (an event stream when one was asked for), then nothing;
 * - `flaky:N`: answers its first N requests with a 500, then normally (a deployment that recovers);
 * - `limited:S`: a 429 with `retry-after: S` (seconds).
 */
export interface HostileUpstream {
  url: string;
  /** Requests received, by upstream model name. */
  readonly requests: Map<string, number>;
  /** Responses whose client (the gateway) went away before the upstream finished them. */
  readonly abortedResponses: number;
  /** Upstream connections open right now. */
  openConnections(): number;
  close(): Promise<void>;
}

/** The credential the hostile upstream's deployments are configured with (it accepts any). */
export const hostileUpstreamApiKey = 'sk-hostile-upstream-secret-0123456789';

type Dialect = 'openai' | 'anthropic';

const providersDirectory = fileURLToPath(new URL('../../providers/', import.meta.url));

function fixtureText(provider: string, name: string): string {
  return readFileSync(`${providersDirectory}${provider}/__fixtures__/${name}`, 'utf8');
}

function fixtureEvents(provider: string): string[] {
  return fixtureText(provider, 'text.chunks.txt')
    .split(/\n\n/)
    .filter((event) => event.trim().length > 0)
    .map((event) => `${event}\n\n`);
}

/** The recorded stream of each dialect, cut into what comes before the content deltas, one delta, and the rest. */
interface StreamShape {
  head: string;
  delta: (text: string) => string;
  tail: string;
  /** The tail without the dialect's final event. */
  tailWithoutEnd: string;
}

function openAIShape(): StreamShape {
  const events = fixtureEvents('openai-compatible');
  const contentEvent = events[1] as string;
  const chunk = JSON.parse(contentEvent.slice('data: '.length)) as {
    choices: [{ delta: { content: string } }];
  };
  const tail = events.slice(events.findIndex((event) => event.includes('"finish_reason":"stop"')));
  return {
    head: events[0] as string,
    delta: (text) => {
      chunk.choices[0].delta.content = text;
      return `data: ${JSON.stringify(chunk)}\n\n`;
    },
    tail: tail.join(''),
    tailWithoutEnd: tail.filter((event) => !event.includes('[DONE]')).join(''),
  };
}

function anthropicShape(): StreamShape {
  const events = fixtureEvents('anthropic');
  const firstDelta = events.findIndex((event) => event.startsWith('event: content_block_delta'));
  const lastDelta = events.findLastIndex((event) => event.startsWith('event: content_block_delta'));
  const payload = JSON.parse((events[firstDelta] as string).split('\ndata: ')[1] as string) as {
    delta: { text: string };
  };
  const tail = events.slice(lastDelta + 1);
  return {
    head: events.slice(0, firstDelta).join(''),
    delta: (text) => {
      payload.delta.text = text;
      return `event: content_block_delta\ndata: ${JSON.stringify(payload)}\n\n`;
    },
    tail: tail.join(''),
    tailWithoutEnd: tail.filter((event) => !event.startsWith('event: message_stop')).join(''),
  };
}

const shapes: Record<Dialect, StreamShape> = { openai: openAIShape(), anthropic: anthropicShape() };

/** Waits until the upstream has seen a response aborted after `abortedBefore` of them: the gateway let it go. */
export async function waitForAbortedResponse(upstream: HostileUpstream, abortedBefore: number): Promise<void> {
  await waitFor('the upstream connection to be closed', async () => upstream.abortedResponses > abortedBefore, 60_000);
}

/**
 * A raw event stream split into its events: the type (`event:`, else the `type` its JSON data names) and the data.
 */
export function rawStreamEvents(text: string): { type: string; data: string }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim().length > 0)
    .map((block) => {
      const lines = block.split('\n');
      const data = lines
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
        .join('\n');
      const named = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length);
      const typed = /^\{"type":"([^"]+)"/.exec(data)?.[1];
      return { type: named ?? typed ?? '', data };
    });
}

/** The content word the hostile upstream streams as delta number `index`. */
export function burstWord(index: number): string {
  return `w${index} `;
}

/** The whole text of a `burst:N` stream, as a client should receive it. */
export function burstText(count: number): string {
  let text = '';
  for (let index = 0; index < count; index++) text += burstWord(index);
  return text;
}

/** Deltas of a `big-write:MB` stream: as many as make about that many megabytes. */
export function bigWriteDeltaCount(megabytes: number, dialect: Dialect): number {
  return Math.ceil((megabytes * 1024 * 1024) / shapes[dialect].delta(burstWord(99_999)).length);
}

function streamOf(dialect: Dialect, count: number, end = true): string {
  const shape = shapes[dialect];
  const parts: string[] = [shape.head];
  for (let index = 0; index < count; index++) parts.push(shape.delta(burstWord(index)));
  parts.push(end ? shape.tail : shape.tailWithoutEnd);
  return parts.join('');
}

function jsonFixture(dialect: Dialect, name: string): string {
  return fixtureText(dialect === 'openai' ? 'openai-compatible' : 'anthropic', name);
}

/** A JSON completion padded to about `megabytes` with one long text content. */
function hugeJson(dialect: Dialect, megabytes: number): string {
  const body = JSON.parse(jsonFixture(dialect, 'text.json')) as Record<string, unknown>;
  const padding = 'x'.repeat(megabytes * 1024 * 1024);
  if (dialect === 'openai') (body.choices as [{ message: { content: string } }])[0].message.content = padding;
  else (body.content as [{ text: string }])[0].text = padding;
  return JSON.stringify(body);
}

function absurdUsage(dialect: Dialect, stream: boolean): string {
  if (stream) {
    const text = streamOf(dialect, 3);
    return dialect === 'openai'
      ? text.replace(
          // The whole usage object, with its nested `*_tokens_details` objects.
          /"usage":\{(?:[^{}]|\{[^{}]*\})*\}/,
          '"usage":{"prompt_tokens":1e300,"completion_tokens":1e300,"total_tokens":1e300}',
        )
      : text
          .replace('"output_tokens":24', '"output_tokens":1e300')
          .replace('"input_tokens":21', '"input_tokens":1e300');
  }
  const body = JSON.parse(jsonFixture(dialect, 'text.json')) as { usage: Record<string, number> };
  for (const name of Object.keys(body.usage)) if (typeof body.usage[name] === 'number') body.usage[name] = 1e300;
  return JSON.stringify(body).replaceAll('1e+300', '1e300');
}

/** A JSON answer carrying a value nested `depth` levels deep where a tool call's input (or an extra field) goes. */
function deepJson(dialect: Dialect, depth: number): string {
  const deep = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  const body = JSON.parse(jsonFixture(dialect, 'text.json')) as Record<string, unknown>;
  if (dialect === 'anthropic') {
    body.content = [{ type: 'tool_use', id: 'toolu_01', name: 'lookup', input: '__DEEP__' }];
    body.stop_reason = 'tool_use';
  } else body.extra = '__DEEP__';
  return JSON.stringify(body).replace('"__DEEP__"', deep);
}

/** An Anthropic stream whose one tool_use block starts with an `input` nested `depth` levels deep. */
function deepToolStream(depth: number): string {
  const messageStart = shapes.anthropic.head.split('\n\n')[0] as string;
  const deep = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  const block = `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01","name":"lookup","input":${deep}}}`;
  return [
    `${messageStart}\n\n`,
    `event: content_block_start\ndata: ${block}\n\n`,
    'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5}}\n\n',
    'event: message_stop\ndata: {"type":"message_stop"}\n\n',
  ].join('');
}

function errorBody(dialect: Dialect, status: number, message?: string): string {
  if (dialect === 'anthropic') {
    const type = status === 401 ? 'authentication_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
    return JSON.stringify({ type: 'error', error: { type, message: message ?? `upstream error ${status}` } });
  }
  return JSON.stringify({
    error: { message: message ?? `upstream error ${status}`, type: 'invalid_request_error', param: null, code: null },
  });
}

function presentedCredential(request: IncomingMessage): string {
  const header = request.headers['x-api-key'] ?? request.headers.authorization ?? '';
  return String(header).replace(/^Bearer /, '');
}

async function readBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** Starts the hostile upstream on a free loopback port. */
export async function startHostileUpstream(): Promise<HostileUpstream> {
  const requests = new Map<string, number>();
  const sockets = new Set<Socket>();
  let abortedResponses = 0;

  const respond = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const body = await readBody(request);
    const dialect: Dialect = (request.url ?? '').split('?')[0]?.endsWith('/messages') ? 'anthropic' : 'openai';
    const model = String(body.model ?? '');
    requests.set(model, (requests.get(model) ?? 0) + 1);
    const [name, argument] = model.split(':') as [string, string | undefined];
    const count = Number(argument ?? 0);
    const stream = body.stream === true;
    let finished = false;
    response.once('finish', () => (finished = true));
    response.once('close', () => {
      if (!finished) abortedResponses++;
    });
    const sendJson = (status: number, text: string | Buffer, contentType = 'application/json'): void => {
      response.writeHead(status, { 'content-type': contentType });
      response.end(text);
    };
    const sendStream = (text: string): void => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(text);
    };
    switch (name) {
      case 'hang':
        return;
      case 'burst':
        return sendStream(streamOf(dialect, count));
      case 'big-write':
        return sendStream(streamOf(dialect, bigWriteDeltaCount(count, dialect)));
      case 'stall-body':
        if (stream) {
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          response.write(streamOf(dialect, 2).slice(0, shapes[dialect].head.length + 40));
        } else {
          const text = jsonFixture(dialect, 'text.json');
          response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(text.length) });
          response.write(text.slice(0, text.length >> 1));
        }
        return;
      case 'huge':
        if (stream) return sendStream(streamOf(dialect, bigWriteDeltaCount(count, dialect)));
        return sendJson(200, hugeJson(dialect, count));
      case 'huge-error':
        return sendJson(500, errorBody(dialect, 500, 'e'.repeat(count * 1024 * 1024)));
      case 'html':
        return sendJson(200, '<!doctype html><html><body><h1>502 Bad Gateway</h1></body></html>', 'text/html');
      case 'error-in-200':
        return sendJson(200, errorBody(dialect, 500, 'The server had an error while processing your request.'));
      case 'truncated': {
        const text = stream ? streamOf(dialect, 3) : jsonFixture(dialect, 'text.json');
        return stream ? sendStream(text.slice(0, text.length - 30)) : sendJson(200, text.slice(0, text.length >> 1));
      }
      case 'gzip':
        return sendJson(200, gzipSync(jsonFixture(dialect, 'text.json')));
      case 'json-for-stream':
        return sendJson(200, jsonFixture(dialect, 'text.json'));
      case 'no-end':
        return sendStream(streamOf(dialect, 3, false));
      case 'hang-after-end':
        if (!stream) return sendJson(200, jsonFixture(dialect, 'text.json'));
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(streamOf(dialect, 3));
        return;
      case 'reset-after-end':
        if (!stream) return sendJson(200, jsonFixture(dialect, 'text.json'));
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(streamOf(dialect, 3), () => response.socket?.resetAndDestroy());
        return;
      case 'disconnect':
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(streamOf(dialect, count).slice(0, -shapes[dialect].tail.length), () => response.destroy());
        return;
      case 'absurd-usage':
        return stream ? sendStream(absurdUsage(dialect, true)) : sendJson(200, absurdUsage(dialect, false));
      case 'deep-json':
        if (stream && dialect === 'anthropic') return sendStream(deepToolStream(count));
        return sendJson(200, deepJson(dialect, count));
      case 'echo-key':
        return sendJson(count, errorBody(dialect, count, `Invalid API key provided: ${presentedCredential(request)}`));
      case 'stream-echo-key': {
        if (!stream) return sendJson(200, jsonFixture(dialect, 'text.json'));
        const leak = errorBody(dialect, 401, `Invalid API key provided: ${presentedCredential(request)}`);
        const errorEvent = dialect === 'anthropic' ? `event: error\ndata: ${leak}\n\n` : `data: ${leak}\n\n`;
        return sendStream(shapes[dialect].head + shapes[dialect].delta('partial ') + errorEvent);
      }
      case 'error':
        return sendJson(count, errorBody(dialect, count));
      case 'reset':
        request.socket.resetAndDestroy();
        return;
      case 'stall-headers':
        response.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
        response.flushHeaders();
        return;
      case 'flaky':
        if ((requests.get(model) ?? 0) <= count) return sendJson(500, errorBody(dialect, 500));
        return stream ? sendStream(streamOf(dialect, 3)) : sendJson(200, jsonFixture(dialect, 'text.json'));
      case 'limited':
        response.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(count) });
        response.end(errorBody(dialect, 429, 'Rate limit reached for requests'));
        return;
      default:
        return stream ? sendStream(streamOf(dialect, 3)) : sendJson(200, jsonFixture(dialect, 'text.json'));
    }
  };

  const server: Server = createServer((request, response) => {
    respond(request, response).catch(() => response.destroy());
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get abortedResponses() {
      return abortedResponses;
    },
    openConnections: () => sockets.size,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The behaviours the client-API suites (Anthropic Messages, OpenAI Responses) drive through pass-through and
 * translation: every way an upstream stalls, breaks its answer, cuts its stream or echoes the gateway's key.
 */
export const clientApiHostileBehaviours = [
  'text',
  'hang',
  'stall-body',
  'html',
  'error-in-200',
  'truncated',
  'gzip',
  'json-for-stream',
  'no-end',
  'hang-after-end',
  'reset-after-end',
  'disconnect:5',
  'deep-json:100000',
  'echo-key:401',
  'echo-key:500',
  'stream-echo-key',
];

/**
 * The `server` limits of the hostile-upstream suites: small, so a stalled upstream is noticed within the tests'
 * patience (the defaults are minutes), with the size caps the behaviours are measured against.
 */
export const hostileServerLimits = {
  upstreamTimeoutMs: 1_500,
  upstreamBodyTimeoutMs: 1_500,
  upstreamStreamIdleTimeoutMs: 1_500,
  upstreamMaxBodyBytes: 8 * 1024 * 1024,
  upstreamMaxErrorBodyBytes: 64 * 1024,
};

/**
 * A gateway config with one model group per hostile behaviour and dialect: `openai/<behaviour>` is served through
 * pass-through (an OpenAI-compatible deployment) and `anthropic/<behaviour>` through the Anthropic translation.
 */
export function hostileGatewayConfig(
  upstreamUrl: string,
  behaviours: string[],
  server: Record<string, unknown> = {},
): Record<string, unknown> {
  const modelGroups: Record<string, unknown> = {};
  for (const behaviour of behaviours) {
    modelGroups[`openai/${behaviour}`] = {
      deployments: [{ provider: 'openai', model: behaviour, baseURL: `${upstreamUrl}/v1`, apiKey: '${HOSTILE_KEY}' }],
    };
    modelGroups[`anthropic/${behaviour}`] = {
      deployments: [
        { provider: 'anthropic', model: behaviour, baseURL: `${upstreamUrl}/v1`, apiKey: '${HOSTILE_KEY}' },
      ],
    };
  }
  // One attempt per request and no cooldown: these suites check what one misbehaving answer becomes; routing around
  // misbehaving deployments has its own suite (tests/chaos/routing-failover.test.ts).
  return {
    server,
    routing: { retry: { retries: 0 }, cooldown: { failures: 1_000_000, minimumRequests: 1_000_000 } },
    modelGroups,
  };
}

/** The environment a {@link hostileGatewayConfig} needs. */
export const hostileEnvironment = { HOSTILE_KEY: hostileUpstreamApiKey };
