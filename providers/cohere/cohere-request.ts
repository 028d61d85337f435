import type {
  CanonicalChatRequest,
  CanonicalResponseFormat,
  CanonicalTool,
  UpstreamRequest,
  UpstreamTarget,
} from '../../src/canonical/index.ts';
import { invalidRequest } from '../../src/errors.ts';
import { cohereHeaders, readCohereOptions, type CohereOptions } from './cohere-options.ts';
import { toCohereMessages, type CohereRequestMessage } from './cohere-request-messages.ts';

/** A tool definition in Cohere's v2 shape (OpenAI's, without `strict`: Cohere's strictness is request-wide). */
export interface CohereTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

/** Cohere's `thinking` (reasoning models such as command-a-reasoning). */
export type CohereThinking = { type: 'enabled'; token_budget?: number } | { type: 'disabled' };

/** The body of `POST /v2/chat`, as far as the gateway fills it. */
export interface CohereChatRequestBody {
  model: string;
  messages: CohereRequestMessage[];
  tools?: CohereTool[];
  strict_tools?: true;
  tool_choice?: 'REQUIRED' | 'NONE';
  response_format?: { type: 'json_object'; json_schema?: Record<string, unknown> };
  safety_mode?: NonNullable<CohereOptions['safetyMode']>;
  max_tokens?: number;
  stop_sequences?: string[];
  temperature?: number;
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  k?: number;
  p?: number;
  thinking?: CohereThinking;
  /** Documents to ground the answer in: `{id?, data}` each. */
  documents?: { id?: string; data: Record<string, unknown> }[];
  stream?: true;
}

/**
 * Thinking budgets for OpenAI's `reasoning_effort` below `high`; `high` and `xhigh` leave the budget unset, which is
 * Cohere's default (unlimited thinking, the setting its documentation recommends).
 */
const thinkingBudgetByEffort: Partial<Record<NonNullable<CanonicalChatRequest['reasoningEffort']>, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
};

/** Cohere's documented range of `p`, which OpenAI's `top_p` (0 to 1) is clamped to. */
const lowestP = 0.01;
const highestP = 0.99;

/**
 * Builds Cohere's `POST {baseURL}/v2/chat` from a canonical chat request.
 *
 * What does not map one to one:
 * - `tool_choice`: Cohere has `REQUIRED` and `NONE` only. `auto` sends nothing (Cohere's default), `required` sends
 *   `REQUIRED`, `none` sends `NONE`. A named function is sent as the tools list narrowed to that one function with
 *   `REQUIRED`: the model must call a tool and only that one exists, which is what the client asked for. A named
 *   function missing from `tools`, or `required` without tools, is a 400 naming `tool_choice`.
 * - `strict: true` on every tool becomes Cohere's request-wide `strict_tools`; with some tools strict and others
 *   not it is left off (Cohere's strict mode refuses tools with only optional parameters).
 * - `response_format`: `json_object` as is, `json_schema` as `{type:'json_object', json_schema}` (Cohere always
 *   enforces a given schema, so `strict` changes nothing); `text` sends nothing.
 * - `reasoning_effort`: `none` sends `thinking: {type:'disabled'}`; other efforts send `{type:'enabled'}` with the
 *   client's explicit budget (Anthropic's `budget_tokens`) or 1024/2048/8192 tokens for minimal/low/medium and none
 *   (unlimited) for high/xhigh.
 * - `top_p` becomes `p`, clamped to Cohere's 0.01-0.99 (OpenAI clients commonly send 1); `top_k` becomes `k`.
 * - `frequency_penalty`/`presence_penalty` are clamped to Cohere's 0-1; a 0 (many clients send both by default) is
 *   left out, because some Cohere models refuse requests that set both.
 * - Dropped, having no Cohere equivalent: `user`, `parallel_tool_calls` (Cohere decides how many calls to make),
 *   message `name`s. `n > 1`, log probabilities and files are refused by the core, from `chatFeatures`.
 * - `documents` (RAG; an OpenAI client sends them as an extra body parameter) are sent as Cohere's `documents`; the
 *   citations Cohere returns are not carried back (no client API the gateway speaks has a place for them).
 *
 * @example
 * ```ts
 * const upstream = buildCohereChatRequest(request, {
 *   providerName: 'cohere', baseURL: 'https://api.cohere.com', model: 'command-a-03-2025',
 *   apiKey: process.env.CO_API_KEY, headers: {}, options: {},
 * });
 * // upstream.url === 'https://api.cohere.com/v2/chat'
 * ```
 */
export function buildCohereChatRequest(request: CanonicalChatRequest, target: UpstreamTarget): UpstreamRequest {
  const options = readCohereOptions(target.options);
  const body: CohereChatRequestBody = { model: target.model, messages: toCohereMessages(request.messages) };
  Object.assign(body, toToolFields(request));
  const responseFormat = toResponseFormat(request.responseFormat);
  if (responseFormat !== undefined) body.response_format = responseFormat;
  if (options.safetyMode !== undefined) body.safety_mode = options.safetyMode;
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.stop !== undefined && request.stop.length > 0) body.stop_sequences = request.stop;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.seed !== undefined) body.seed = request.seed;
  const frequencyPenalty = toPenalty(request.frequencyPenalty);
  if (frequencyPenalty !== undefined) body.frequency_penalty = frequencyPenalty;
  const presencePenalty = toPenalty(request.presencePenalty);
  if (presencePenalty !== undefined) body.presence_penalty = presencePenalty;
  if (request.topK !== undefined) body.k = request.topK;
  if (request.topP !== undefined) body.p = Math.min(highestP, Math.max(lowestP, request.topP));
  const thinking = toThinking(request);
  if (thinking !== undefined) body.thinking = thinking;
  if (request.documents !== undefined && request.documents.length > 0) body.documents = request.documents;
  if (request.stream) body.stream = true;
  return {
    url: `${target.baseURL}/v2/chat`,
    method: 'POST',
    headers: cohereHeaders(target, request.stream ? 'text/event-stream' : 'application/json'),
    body: JSON.stringify(body),
  };
}

/**
 * The health check of a Cohere deployment: `GET {baseURL}/v1/models?page_size=1`, Cohere's model list (v1 is the
 * only version of that endpoint), which costs no tokens.
 *
 * @example
 * buildCohereHealthCheckRequest(target).url; // 'https://api.cohere.com/v1/models?page_size=1'
 */
export function buildCohereHealthCheckRequest(target: UpstreamTarget): UpstreamRequest {
  return {
    url: `${target.baseURL}/v1/models?page_size=1`,
    method: 'GET',
    headers: cohereHeaders(target, 'application/json'),
    body: undefined,
  };
}

type ToolFields = Pick<CohereChatRequestBody, 'tools' | 'strict_tools' | 'tool_choice'>;

function toToolFields(request: CanonicalChatRequest): ToolFields {
  const tools = request.tools ?? [];
  const choice = request.toolChoice;
  switch (choice?.type) {
    case undefined:
    case 'auto':
      return withTools(tools);
    case 'none':
      return tools.length > 0 ? { ...withTools(tools), tool_choice: 'NONE' } : {};
    case 'required':
      if (tools.length === 0) throw invalidRequest('tool_choice "required" needs at least one tool.', 'tool_choice');
      return { ...withTools(tools), tool_choice: 'REQUIRED' };
    case 'tool': {
      const chosen = tools.find((tool) => tool.name === choice.name);
      if (chosen === undefined)
        throw invalidRequest(`tool_choice names the function '${choice.name}', which is not in tools.`, 'tool_choice');
      return { ...withTools([chosen]), tool_choice: 'REQUIRED' };
    }
  }
}

function withTools(tools: readonly CanonicalTool[]): ToolFields {
  if (tools.length === 0) return {};
  const fields: ToolFields = { tools: tools.map(toCohereTool) };
  if (tools.every((tool) => tool.strict === true)) fields.strict_tools = true;
  return fields;
}

function toCohereTool(tool: CanonicalTool): CohereTool {
  return {
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      parameters: tool.parameters,
    },
  };
}

function toResponseFormat(format: CanonicalResponseFormat | undefined): CohereChatRequestBody['response_format'] {
  switch (format?.type) {
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema':
      return { type: 'json_object', json_schema: format.schema };
    default:
      return undefined;
  }
}

function toPenalty(value: number | undefined): number | undefined {
  if (value === undefined || value <= 0) return undefined;
  return Math.min(1, value);
}

function toThinking(request: CanonicalChatRequest): CohereThinking | undefined {
  const effort = request.reasoningEffort;
  if (effort === undefined) return undefined;
  if (effort === 'none') return { type: 'disabled' };
  const budget = request.reasoningBudgetTokens ?? thinkingBudgetByEffort[effort];
  return budget === undefined ? { type: 'enabled' } : { type: 'enabled', token_budget: budget };
}
