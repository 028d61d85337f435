/**
 * The client side of the benchmark scenarios: the request bodies wrk sends and the path it sends them to. `chat` and
 * `chat-stream` are a realistic ~1 KB OpenAI chat request (a system prompt and a short conversation), identical except
 * for `stream`; `messages` is the same conversation as a ~1 KB Anthropic Messages request (not streamed), for a model
 * group whose deployment is Anthropic-shaped, so the gateway passes it through in the same dialect; `responses` is the
 * same conversation as a ~1 KB OpenAI Responses request (not streamed, `store: false`), for a model group whose
 * deployment is an `openai` one, which serves the Responses API natively, so it passes through in the same dialect too.
 */

/** A scenario name as it appears in the report and in `bench/results/latest.json`. */
export type ScenarioName = 'chat' | 'chat-stream' | 'chat-ten' | 'messages' | 'responses';

/** Every scenario, in report order. */
export const scenarioNames: readonly ScenarioName[] = ['chat', 'chat-stream', 'chat-ten', 'messages', 'responses'];

/** The model group the benchmark config defines for the OpenAI chat scenarios (an `openai` deployment). */
export const benchModel = 'bench-model';

/** The model group of the `messages` scenario (an `anthropic` deployment, so `/v1/messages` passes through). */
export const benchClaudeModel = 'bench-claude';

/** The model group of the `responses` scenario (an `openai` deployment, so `/v1/responses` passes through). */
export const benchResponsesModel = 'bench-responses';

/** A group of ten deployments (all the mock) under the `latency` strategy: what routing costs a healthy group. */
export const benchTenModel = 'bench-ten';

/** What wrk, the floor and torii need to know about a scenario besides its body. */
export interface Scenario {
  /** The request path, the same on every target (the floor forwards it as it is). */
  path: string;
  /** The model group the request asks for. */
  model: string;
}

/** Every scenario's request path and model group. */
export const scenarios: Readonly<Record<ScenarioName, Scenario>> = {
  chat: { path: '/v1/chat/completions', model: benchModel },
  'chat-stream': { path: '/v1/chat/completions', model: benchModel },
  'chat-ten': { path: '/v1/chat/completions', model: benchTenModel },
  messages: { path: '/v1/messages', model: benchClaudeModel },
  responses: { path: '/v1/responses', model: benchResponsesModel },
};

/** The system prompt of every scenario (the Responses request's `instructions`, which the mock's answer echoes). */
export const systemPrompt =
  'You are a support assistant for an online bookshop. Answer briefly and politely, cite the order number when ' +
  'you refer to an order, never invent tracking numbers, and hand over to a human agent when the customer asks ' +
  'for a refund above 100 EUR or mentions a legal complaint.';

/** The conversation after the system prompt, user and assistant turns alternating. */
const conversation = [
  {
    role: 'user',
    content: 'Hi, I ordered two books last Tuesday (order 48213) and only one of them has arrived so far.',
  },
  {
    role: 'assistant',
    content:
      'Thanks for letting me know. Order 48213 was shipped in two parcels: the first was delivered on Friday, the ' +
      'second left our warehouse on Saturday and is with the carrier now.',
  },
  {
    role: 'user',
    content:
      'Great, thanks. Can you tell me roughly when the second parcel should arrive, and whether I can change the ' +
      'delivery address to my office? I will not be home on Thursday or Friday this week.',
  },
];

const chatMessages = [{ role: 'system', content: systemPrompt }, ...conversation];

/**
 * The settings of the `responses` request that a Response object echoes (the mock's answer repeats them). `store:
 * false`: with `store` true (the API's default) the gateway records every response's id in its database, which is a
 * different measurement.
 */
export const responsesSettings = { max_output_tokens: 256, temperature: 0.2, store: false } as const;

/** The conversation as Responses message items: user turns in `input_text` parts, assistant turns in `output_text`. */
const responsesInput = conversation.map((turn) => ({
  type: 'message',
  role: turn.role,
  content: [{ type: turn.role === 'assistant' ? 'output_text' : 'input_text', text: turn.content }],
}));

/**
 * Returns the JSON request body of a scenario, ~1 KB.
 *
 * @example
 * const body = scenarioRequestBody('chat-stream'); // '{"model":"bench-model","messages":[...],"stream":true,...}'
 * const messagesBody = scenarioRequestBody('messages'); // '{"model":"bench-claude","max_tokens":256,"system":...}'
 * const responsesBody = scenarioRequestBody('responses'); // '{"model":"bench-responses","instructions":...}'
 */
export function scenarioRequestBody(scenario: ScenarioName): string {
  if (scenario === 'messages') {
    return JSON.stringify({
      model: scenarios.messages.model,
      max_tokens: 256,
      system: systemPrompt,
      messages: conversation,
      temperature: 0.2,
      metadata: { user_id: 'bench-user-0001' },
    });
  }
  if (scenario === 'responses') {
    return JSON.stringify({
      model: scenarios.responses.model,
      instructions: systemPrompt,
      input: responsesInput,
      ...responsesSettings,
    });
  }
  const body: Record<string, unknown> = {
    model: scenarios[scenario].model,
    messages: chatMessages,
    temperature: 0.2,
    max_completion_tokens: 256,
    user: 'bench-user-0001',
  };
  if (scenario === 'chat-stream') {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return JSON.stringify(body);
}
