/**
 * The client side of the benchmark scenarios: the request bodies wrk sends. Both are a realistic ~1 KB OpenAI chat
 * request (a system prompt and a short conversation), identical except for `stream`.
 */

/** A scenario name as it appears in the report and in `bench/results/latest.json`. */
export type ScenarioName = 'chat' | 'chat-stream';

/** Every scenario, in report order. */
export const scenarioNames: readonly ScenarioName[] = ['chat', 'chat-stream'];

/** The model group the benchmark config defines and every request asks for. */
export const benchModel = 'bench-model';

const messages = [
  {
    role: 'system',
    content:
      'You are a support assistant for an online bookshop. Answer briefly and politely, cite the order number when ' +
      'you refer to an order, never invent tracking numbers, and hand over to a human agent when the customer asks ' +
      'for a refund above 100 EUR or mentions a legal complaint.',
  },
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

/**
 * Returns the JSON request body of a scenario, ~1 KB.
 *
 * @example
 * const body = scenarioRequestBody('chat-stream'); // '{"model":"bench-model","messages":[...],"stream":true,...}'
 */
export function scenarioRequestBody(scenario: ScenarioName): string {
  const body: Record<string, unknown> = {
    model: benchModel,
    messages,
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
