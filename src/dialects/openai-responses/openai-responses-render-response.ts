import type { CanonicalChatResponse, CanonicalChoice } from '../../canonical/canonical-chat-response.ts';
import type { OpenAIResponsesRequest } from './openai-responses-request-schema.ts';
import { toResponsesUsage, type ResponsesWireUsage } from './openai-responses-usage.ts';

/** What a rendered Response object needs besides the answer. */
export interface ResponseRenderContext {
  /** The gateway's response id (`resp_...`, see {@link newResponseId}); output item ids derive from it. */
  id: string;
  /** Unix seconds, when the gateway took the request. */
  createdAt: number;
  /** Unix seconds, when the answer was complete; now when left out. */
  completedAt?: number;
  request: OpenAIResponsesRequest;
}

/**
 * A new Responses id: `resp_` and 32 hex digits from the platform's cryptographic random source.
 *
 * @example
 * newResponseId(); // 'resp_9f86d081884c7d659a2feaa0c55ad015'
 */
export function newResponseId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `resp_${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

/** The status of a response and why it is incomplete, from the finish reason of its choice. */
function completion(choice: CanonicalChoice | undefined): {
  status: 'completed' | 'incomplete';
  incompleteDetails: { reason: 'max_output_tokens' | 'content_filter' } | null;
} {
  switch (choice?.finishReason.unified) {
    case 'length':
      return { status: 'incomplete', incompleteDetails: { reason: 'max_output_tokens' } };
    case 'content-filter':
      return { status: 'incomplete', incompleteDetails: { reason: 'content_filter' } };
    default:
      return { status: 'completed', incompleteDetails: null };
  }
}

/**
 * The output items of choice 0, in OpenAI's order: a `reasoning` item (the provider's reasoning as its summary) when
 * there is reasoning, a `message` item when there is text or a refusal, then one `function_call` item per tool call.
 * Item ids are the response id's suffix and the item's position (`msg_<suffix>_1`), so the same answer always gets the
 * same ids; items of an incomplete response are `incomplete`.
 */
function outputItems(
  choice: CanonicalChoice | undefined,
  responseId: string,
  status: 'completed' | 'incomplete',
): Record<string, unknown>[] {
  const suffix = responseId.startsWith('resp_') ? responseId.slice('resp_'.length) : responseId;
  const items: Record<string, unknown>[] = [];
  const itemId = (prefix: string) => `${prefix}_${suffix}_${items.length}`;
  if (choice === undefined) return items;
  if (choice.reasoning !== undefined && choice.reasoning.length > 0) {
    items.push({ id: itemId('rs'), type: 'reasoning', summary: [{ type: 'summary_text', text: choice.reasoning }] });
  }
  const content: Record<string, unknown>[] = [];
  if (choice.text !== null && choice.text.length > 0) {
    content.push({ type: 'output_text', annotations: [], logprobs: [], text: choice.text });
  }
  if (choice.refusal != null && choice.refusal.length > 0) content.push({ type: 'refusal', refusal: choice.refusal });
  if (content.length > 0) {
    items.push({ id: itemId('msg'), type: 'message', status, content, role: 'assistant' });
  }
  for (const call of choice.toolCalls) {
    items.push({
      id: itemId('fc'),
      type: 'function_call',
      status,
      arguments: call.arguments,
      call_id: call.id,
      name: call.name,
    });
  }
  return items;
}

/**
 * Renders a translated, complete chat answer as a Responses `response` object (the body of a non-streamed
 * `POST /v1/responses`), with every field OpenAI returns: the output items of choice 0, the status (`incomplete`
 * with `incomplete_details` when the answer hit the token limit or a content filter), and the request's settings
 * echoed with OpenAI's defaults (`store` and `parallel_tool_calls` true, `temperature` and `top_p` 1, `truncation`
 * `disabled`, `tool_choice` `auto`). `usage` is zero when the provider reported none. `output_text` is left out: it
 * is not on the wire, the SDKs compute it.
 *
 * @example
 * const body = renderOpenAIResponse(answer, { id: newResponseId(), createdAt: Math.floor(Date.now() / 1000), request });
 */
export function renderOpenAIResponse(
  answer: CanonicalChatResponse,
  context: ResponseRenderContext,
): Record<string, unknown> {
  const choice = answer.choices[0];
  const { status, incompleteDetails } = completion(choice);
  return responseObject(context.request, {
    id: context.id,
    createdAt: context.createdAt,
    status,
    completedAt: status === 'completed' ? (context.completedAt ?? Math.floor(Date.now() / 1000)) : null,
    error: null,
    incompleteDetails,
    model: answer.model.length > 0 ? answer.model : context.request.model,
    output: outputItems(choice, context.id, status),
    usage: toResponsesUsage(answer.usage ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0 }),
  });
}

/** The parts of a Response object that come from the answer rather than the request. */
export interface ResponseObjectFields {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  status: string;
  /** Unix seconds; null until (or unless) the response completed. */
  completedAt: number | null;
  error: { code: string; message: string } | null;
  incompleteDetails: { reason: string } | null;
  model: string;
  output: Record<string, unknown>[];
  usage: ResponsesWireUsage | null;
}

/**
 * A Response object as OpenAI shapes it, in every state (`in_progress` to `completed`, `incomplete` or `failed`): the
 * answer's fields, and the request's settings echoed with OpenAI's defaults (`store` and `parallel_tool_calls` true,
 * `temperature` and `top_p` 1, `truncation` `disabled`, `tool_choice` `auto`). The one builder for answers and stream
 * events alike, so a stored streamed response reads back as a non-streamed one would.
 *
 * @example
 * responseObject(request, { id, createdAt, status: 'in_progress', completedAt: null, error: null,
 *   incompleteDetails: null, model: request.model, output: [], usage: null });
 */
export function responseObject(request: OpenAIResponsesRequest, fields: ResponseObjectFields): Record<string, unknown> {
  return {
    id: fields.id,
    object: 'response',
    created_at: fields.createdAt,
    status: fields.status,
    background: false,
    completed_at: fields.completedAt,
    error: fields.error,
    incomplete_details: fields.incompleteDetails,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: fields.model,
    output: fields.output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    prompt_cache_key: request.prompt_cache_key ?? null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    safety_identifier: request.safety_identifier ?? null,
    store: request.store ?? true,
    temperature: request.temperature ?? 1,
    text: { format: request.text?.format ?? { type: 'text' }, verbosity: request.text?.verbosity ?? 'medium' },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1,
    truncation: request.truncation ?? 'disabled',
    usage: fields.usage,
    user: request.user ?? null,
    metadata: request.metadata ?? {},
  };
}

/**
 * The output items of a Response object (rendered here or relayed from a native upstream), for storing beside its
 * input items; an empty list when `output` is missing or not a list, and only the entries that are objects.
 *
 * @example
 * const storedItems = [...responsesInputItems(request), ...responseOutputItems(response)];
 */
export function responseOutputItems(response: Record<string, unknown>): Record<string, unknown>[] {
  const output = response.output;
  if (!Array.isArray(output)) return [];
  return output.filter(
    (item): item is Record<string, unknown> => typeof item === 'object' && item !== null && !Array.isArray(item),
  );
}
