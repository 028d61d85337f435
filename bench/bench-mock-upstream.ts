import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The benchmark's mock upstream, OpenAI- and Anthropic-shaped: `POST /v1/chat/completions` answers a realistic chat
 * completion (~1 KB JSON with usage) or, with `stream: true`, an SSE stream of ~10 content chunks, an optional usage
 * chunk (`stream_options.include_usage`) and `data: [DONE]`. `POST /v1/messages` answers a realistic Anthropic
 * Messages JSON answer with the same content and usage (not streamed: the bench sends no streamed Messages request).
 * `GET /health/ready` answers 200 so the floor proxy's cold start can be measured the same way as the gateway's.
 *
 * It must stay cheap, because it shares a core with the load generator: every body is precomputed per model name and
 * the only per-request work is one `JSON.parse` of the request. There is no artificial delay, and no header (API key,
 * `anthropic-version`) is checked on either path.
 *
 * Run it alone with `PORT=4000 node bench/bench-mock-upstream.ts`.
 */

const contentPieces = [
  'Your second parcel',
  ' for order 48213',
  ' is expected on',
  ' Wednesday between',
  ' 9:00 and 13:00.',
  ' I can redirect it',
  ' to your office:',
  ' please send me the',
  ' full address and',
  ' I will update the delivery.',
];

const completionContent = contentPieces.join('') + ' ' + contentPieces.join('') + ' ' + contentPieces.join('');

const usage = {
  prompt_tokens: 212,
  completion_tokens: 96,
  total_tokens: 308,
  prompt_tokens_details: { cached_tokens: 128, audio_tokens: 0 },
  completion_tokens_details: {
    reasoning_tokens: 0,
    audio_tokens: 0,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
  },
};

/** The same counts as Anthropic reports them: `input_tokens` excludes the tokens read from the prompt cache. */
const anthropicUsage = {
  input_tokens: usage.prompt_tokens - usage.prompt_tokens_details.cached_tokens,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: usage.prompt_tokens_details.cached_tokens,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
  output_tokens: usage.completion_tokens,
  service_tier: 'standard',
};

const completionId = 'chatcmpl-BenchMockUpstream0000000000001';
const messageId = 'msg_01BenchMockUpstream000000001';
const created = 1_760_000_000;
const systemFingerprint = 'fp_bench0001';

/** The precomputed response bodies for one model name. */
interface MockBodies {
  completion: Buffer;
  streamWithUsage: Buffer[];
  streamWithoutUsage: Buffer[];
  /** The Anthropic Messages answer. */
  message: Buffer;
}

function buildCompletion(model: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: completionId,
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: completionContent, refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage,
      service_tier: 'default',
      system_fingerprint: systemFingerprint,
    }),
  );
}

function buildMessage(model: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: messageId,
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text: completionContent }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: anthropicUsage,
    }),
  );
}

function buildStream(model: string, includeUsage: boolean): Buffer[] {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): Buffer =>
    Buffer.from(
      `data: ${JSON.stringify({
        id: completionId,
        object: 'chat.completion.chunk',
        created,
        model,
        service_tier: 'default',
        system_fingerprint: systemFingerprint,
        choices,
        ...(includeUsage ? { usage: null } : {}),
        ...extra,
      })}\n\n`,
    );
  const events = [
    chunk([
      { index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null },
    ]),
    ...contentPieces.map((content) => chunk([{ index: 0, delta: { content }, logprobs: null, finish_reason: null }])),
    chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]),
  ];
  if (includeUsage) events.push(chunk([], { usage }));
  events.push(Buffer.from('data: [DONE]\n\n'));
  return events;
}

const bodiesByModel = new Map<string, MockBodies>();
const maximumCachedModels = 32;

function bodiesFor(model: string): MockBodies {
  let bodies = bodiesByModel.get(model);
  if (bodies === undefined) {
    bodies = {
      completion: buildCompletion(model),
      streamWithUsage: buildStream(model, true),
      streamWithoutUsage: buildStream(model, false),
      message: buildMessage(model),
    };
    if (bodiesByModel.size < maximumCachedModels) bodiesByModel.set(model, bodies);
  }
  return bodies;
}

const readyBody = Buffer.from('{"status":"ready"}');
const notFoundBody = Buffer.from('{"error":{"message":"not found","type":"invalid_request_error"}}');
const badRequestBody = Buffer.from('{"error":{"message":"invalid JSON body","type":"invalid_request_error"}}');
const anthropicBadRequestBody = Buffer.from(
  '{"type":"error","error":{"type":"invalid_request_error","message":"invalid JSON body"}}',
);

function sendJson(response: ServerResponse, status: number, body: Buffer): void {
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  response.end(body);
}

/** The shape of the request fields the mock reads. */
interface MockChatRequest {
  model?: unknown;
  stream?: unknown;
  stream_options?: { include_usage?: unknown } | null;
}

function answerChat(request: IncomingMessage, response: ServerResponse): void {
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', () => {
    let chatRequest: MockChatRequest;
    try {
      chatRequest = JSON.parse(Buffer.concat(parts).toString('utf8')) as MockChatRequest;
    } catch {
      sendJson(response, 400, badRequestBody);
      return;
    }
    const bodies = bodiesFor(typeof chatRequest.model === 'string' ? chatRequest.model : 'bench-model');
    if (chatRequest.stream !== true) {
      sendJson(response, 200, bodies.completion);
      return;
    }
    const includeUsage = chatRequest.stream_options?.include_usage === true;
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    // Writes made in one tick are corked by node:http into one writev, so the chunk framing is realistic but cheap.
    for (const event of includeUsage ? bodies.streamWithUsage : bodies.streamWithoutUsage) response.write(event);
    response.end();
  });
}

/** `POST /v1/messages`: the precomputed Messages answer for the request's model, as cheap as the chat path. */
function answerMessages(request: IncomingMessage, response: ServerResponse): void {
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', () => {
    let messagesRequest: { model?: unknown };
    try {
      messagesRequest = JSON.parse(Buffer.concat(parts).toString('utf8')) as { model?: unknown };
    } catch {
      sendJson(response, 400, anthropicBadRequestBody);
      return;
    }
    const bodies = bodiesFor(typeof messagesRequest.model === 'string' ? messagesRequest.model : 'bench-claude');
    sendJson(response, 200, bodies.message);
  });
}

function handle(request: IncomingMessage, response: ServerResponse): void {
  const path = request.url ?? '/';
  if (request.method === 'POST' && path === '/v1/chat/completions') {
    answerChat(request, response);
  } else if (request.method === 'POST' && path === '/v1/messages') {
    answerMessages(request, response);
  } else if (request.method === 'GET' && path === '/health/ready') {
    sendJson(response, 200, readyBody);
  } else {
    request.resume();
    sendJson(response, 404, notFoundBody);
  }
}

/**
 * Starts the mock upstream and resolves once it listens.
 *
 * @example
 * const server = await startMockUpstream({ port: 0 });
 * const port = (server.address() as AddressInfo).port;
 */
export async function startMockUpstream(options: { port: number; host?: string }): Promise<Server> {
  const server = createServer(handle);
  // Proxies keep pooled connections idle between load runs; closing them early would race with reuse.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve) => server.listen(options.port, options.host ?? '127.0.0.1', resolve));
  return server;
}

if (import.meta.main) {
  const server = await startMockUpstream({ port: Number(process.env.PORT ?? 4000) });
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`bench mock upstream listening on http://127.0.0.1:${port}\n`);
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
