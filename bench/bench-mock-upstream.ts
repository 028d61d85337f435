import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { responsesSettings, systemPrompt } from './bench-scenarios.ts';

/**
 * The benchmark's mock upstream, OpenAI- and Anthropic-shaped: `POST /v1/chat/completions` answers a realistic chat
 * completion (~1 KB JSON with usage) or, with `stream: true`, an SSE stream of ~10 content chunks, an optional usage
 * chunk (`stream_options.include_usage`) and `data: [DONE]`. `POST /v1/messages` answers a realistic Anthropic
 * Messages JSON answer with the same content and usage (not streamed: the bench sends no streamed Messages request).
 * `POST /v1/responses` answers a realistic OpenAI Responses `response` object with the same content and usage (not
 * streamed either), echoing the bench request's settings (`instructions`, `max_output_tokens`, `temperature`,
 * `store`) as OpenAI does: they are precomputed, so another request's settings are not echoed, only its model.
 * `GET /health/ready` answers 200 so the floor proxy's cold start can be measured the same way as the gateway's.
 *
 * It must stay cheap, because it shares a core with the load generator: every body is precomputed per model name and
 * the only per-request work is one `JSON.parse` of the request. There is no artificial delay, and no header (API key,
 * `anthropic-version`) is checked on any path.
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

/** The same counts as the Responses API reports them (`input_tokens` includes the cached ones, like chat's). */
const responsesUsage = {
  input_tokens: usage.prompt_tokens,
  input_tokens_details: { cached_tokens: usage.prompt_tokens_details.cached_tokens },
  output_tokens: usage.completion_tokens,
  output_tokens_details: { reasoning_tokens: usage.completion_tokens_details.reasoning_tokens },
  total_tokens: usage.total_tokens,
};

const completionId = 'chatcmpl-BenchMockUpstream0000000000001';
const messageId = 'msg_01BenchMockUpstream000000001';
const responseId = 'resp_BenchMockUpstream00000000000000000000000000001';
const responseMessageId = 'msg_BenchMockUpstream00000000000000000000000000001';
const created = 1_760_000_000;
const systemFingerprint = 'fp_bench0001';

/** The precomputed response bodies for one model name. */
interface MockBodies {
  completion: Buffer;
  streamWithUsage: Buffer[];
  streamWithoutUsage: Buffer[];
  /** The Anthropic Messages answer. */
  message: Buffer;
  /** The OpenAI Responses answer. */
  response: Buffer;
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

/** A completed Response object, with every field OpenAI sends in the order it sends them. */
function buildResponse(model: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: responseId,
      object: 'response',
      created_at: created,
      status: 'completed',
      background: false,
      error: null,
      incomplete_details: null,
      instructions: systemPrompt,
      max_output_tokens: responsesSettings.max_output_tokens,
      max_tool_calls: null,
      model,
      output: [
        {
          id: responseMessageId,
          type: 'message',
          status: 'completed',
          content: [{ type: 'output_text', annotations: [], logprobs: [], text: completionContent }],
          role: 'assistant',
        },
      ],
      parallel_tool_calls: true,
      previous_response_id: null,
      prompt_cache_key: null,
      reasoning: { effort: null, summary: null },
      safety_identifier: null,
      service_tier: 'default',
      store: responsesSettings.store,
      temperature: responsesSettings.temperature,
      text: { format: { type: 'text' }, verbosity: 'medium' },
      tool_choice: 'auto',
      tools: [],
      top_logprobs: 0,
      top_p: 1,
      truncation: 'disabled',
      usage: responsesUsage,
      user: null,
      metadata: {},
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
      response: buildResponse(model),
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

/**
 * `POST /v1/messages` and `POST /v1/responses`: the precomputed JSON answer for the request's model (`answer` picks
 * it; `defaultModel` when the request names none), as cheap as the chat path. An unparsable body gets `badRequest`.
 */
function answerPrecomputed(
  request: IncomingMessage,
  response: ServerResponse,
  options: { answer: (bodies: MockBodies) => Buffer; defaultModel: string; badRequest: Buffer },
): void {
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', () => {
    let parsed: { model?: unknown };
    try {
      parsed = JSON.parse(Buffer.concat(parts).toString('utf8')) as { model?: unknown };
    } catch {
      sendJson(response, 400, options.badRequest);
      return;
    }
    const bodies = bodiesFor(typeof parsed.model === 'string' ? parsed.model : options.defaultModel);
    sendJson(response, 200, options.answer(bodies));
  });
}

const messagesAnswer = {
  answer: (bodies: MockBodies) => bodies.message,
  defaultModel: 'bench-claude',
  badRequest: anthropicBadRequestBody,
};
const responsesAnswer = {
  answer: (bodies: MockBodies) => bodies.response,
  defaultModel: 'bench-responses',
  badRequest: badRequestBody,
};

function handle(request: IncomingMessage, response: ServerResponse): void {
  const path = request.url ?? '/';
  if (request.method === 'POST' && path === '/v1/chat/completions') {
    answerChat(request, response);
  } else if (request.method === 'POST' && path === '/v1/messages') {
    answerPrecomputed(request, response, messagesAnswer);
  } else if (request.method === 'POST' && path === '/v1/responses') {
    answerPrecomputed(request, response, responsesAnswer);
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
