import * as z from 'zod/mini';
import type {
  CanonicalChatRequest,
  ClientDialectId,
  CanonicalTool,
  CanonicalToolChoice,
  UpstreamRequest,
  UpstreamTarget,
} from '../../src/canonical/index.ts';
import { GatewayError, invalidRequest } from '../../src/errors.ts';
import { jsonResponseToolDescription, jsonResponseToolName } from './anthropic-json-response.ts';
import { toAnthropicConversation, type AnthropicRequestMessage } from './anthropic-request-messages.ts';

/** The `anthropic-version` header sent unless the deployment overrides it. */
export const defaultAnthropicVersion = '2023-06-01';

/** The `max_tokens` sent when the client set none (Anthropic requires one); `options.defaultMaxTokens` overrides it. */
export const defaultAnthropicMaxTokens = 4096;

/** A tool definition in Anthropic's shape. */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  strict?: boolean;
}

/** Anthropic's `tool_choice`. */
export type AnthropicToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

/** The body of `POST /v1/messages`, as far as the gateway fills it. */
export interface AnthropicMessagesRequestBody {
  model: string;
  max_tokens: number;
  system?: string;
  messages: AnthropicRequestMessage[];
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  output_config?: { format: { type: 'json_schema'; schema: Record<string, unknown> } };
  thinking?: { type: 'enabled'; budget_tokens: number };
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  metadata?: { user_id: string };
  stream?: true;
}

/**
 * The deployment options this translator reads from `target.options`:
 * - `anthropicVersion`: the `anthropic-version` header (default {@link defaultAnthropicVersion});
 * - `defaultMaxTokens`: `max_tokens` when the client sent none (default {@link defaultAnthropicMaxTokens});
 * - `structuredOutputs`: `"tool"` (default) or `"native"`, see `anthropic-json-response.ts`.
 */
export const anthropicOptionsSchema = z.object({
  anthropicVersion: z.optional(z.string()),
  defaultMaxTokens: z.optional(z.int().check(z.positive())),
  structuredOutputs: z.optional(z.enum(['tool', 'native'])),
});

/** The problems of a deployment's options (`<option>: <reason>`), checked at start; empty when they are valid. */
export function validateAnthropicOptions(options: Record<string, unknown>): string[] {
  const parsed = anthropicOptionsSchema.safeParse(options);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

/** Parsed deployment options, see {@link anthropicOptionsSchema}. */
export type AnthropicOptions = z.infer<typeof anthropicOptionsSchema>;

/**
 * Extended-thinking budgets for OpenAI's `reasoning_effort`, the convention other gateways follow (Anthropic's
 * minimum budget is 1024 tokens). Thinking tokens count toward `max_tokens`, as reasoning tokens count toward
 * OpenAI's `max_completion_tokens`.
 */
const thinkingBudgetByEffort: Record<Exclude<NonNullable<CanonicalChatRequest['reasoningEffort']>, 'none'>, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
};
const minimumThinkingBudget = 1024;

/**
 * Builds Anthropic's `POST {baseURL}/messages` from a canonical chat request.
 *
 * What does not map one to one:
 * - `max_tokens` is mandatory for Anthropic: absent, it is `options.defaultMaxTokens` (4096), plus the thinking
 *   budget when `reasoning_effort` turned thinking on.
 * - `reasoning_effort` turns on extended thinking with a budget per effort (1024/2048/8192/16384), capped below a
 *   client's `max_tokens`; a `max_tokens` that leaves no room for the 1024-token minimum is a 400.
 * - `response_format` json: see `anthropic-json-response.ts` (a forced tool by default, native `output_config`
 *   when the deployment opts in).
 * - A conversation of only system messages (which OpenAI answers, and for which Anthropic refuses an empty
 *   `messages`) sends the system prompt as the one user turn; see `toAnthropicConversation`.
 * - `parallel_tool_calls: false` becomes `disable_parallel_tool_use` on `tool_choice` (an `auto` choice is added
 *   when the client set none).
 * - `seed`, `presence_penalty` and `frequency_penalty` are ignored: Anthropic has no equivalent, and rejecting them
 *   would break the many OpenAI clients and frameworks that send them by default (often as `0`). Message `name`s
 *   and image `detail` are dropped likewise.
 * - Rejected with a 400 (Anthropic cannot do them, and silently ignoring them would return something other than
 *   what was asked): `temperature` above Anthropic's range of 0 to 1 here; `n > 1` and log probabilities by the core,
 *   from the translator's feature declaration.
 *
 * @example
 * ```ts
 * const upstream = buildAnthropicChatRequest(request, {
 *   providerName: 'anthropic', baseURL: 'https://api.anthropic.com/v1', model: 'claude-sonnet-4-5',
 *   apiKey: 'sk-ant-...', headers: {}, options: {},
 * });
 * // upstream.url === 'https://api.anthropic.com/v1/messages'
 * ```
 */
export function buildAnthropicChatRequest(request: CanonicalChatRequest, target: UpstreamTarget): UpstreamRequest {
  rejectInexpressible(request);
  const options = readOptions(target.options);
  const { system, messages } = toAnthropicConversation(request.messages);
  const thinkingBudget = toThinkingBudget(request);
  const defaultMaxTokens = (options.defaultMaxTokens ?? defaultAnthropicMaxTokens) + (thinkingBudget ?? 0);
  const maxTokens = request.maxTokens ?? defaultMaxTokens;

  const body: AnthropicMessagesRequestBody = { model: target.model, max_tokens: maxTokens, messages };
  if (system !== undefined) body.system = system;
  Object.assign(body, toToolFields(request, options, thinkingBudget !== undefined));
  if (thinkingBudget !== undefined) body.thinking = { type: 'enabled', budget_tokens: thinkingBudget };
  if (request.stop !== undefined && request.stop.length > 0) body.stop_sequences = request.stop;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.topK !== undefined) body.top_k = request.topK;
  if (request.user !== undefined) body.metadata = { user_id: request.user };
  if (request.stream) body.stream = true;

  return {
    url: `${target.baseURL}/messages`,
    method: 'POST',
    headers: toHeaders(target, options),
    body: JSON.stringify(body),
  };
}

/**
 * Builds the pass-through request of an Anthropic client (Messages, or its token counting): the body as the client
 * sent it (the core set the upstream model), the client's `anthropic-version` and `anthropic-beta` over the
 * deployment's defaults, and the config's headers over both.
 *
 * @example
 * const upstream = buildAnthropicNativeRequest('anthropic-messages', body, target, { 'anthropic-beta': 'context-1m-2025-08-07' });
 * // upstream.url === 'https://api.anthropic.com/v1/messages'
 */
export function buildAnthropicNativeRequest(
  dialect: ClientDialectId,
  body: Record<string, unknown>,
  target: UpstreamTarget,
  clientHeaders: Readonly<Record<string, string>> = {},
): UpstreamRequest {
  const path = anthropicNativePaths[dialect];
  if (path === undefined) throw new Error(`anthropic cannot pass through ${dialect}`);
  const options = readOptions(target.options);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': options.anthropicVersion ?? defaultAnthropicVersion,
  };
  for (const [name, value] of Object.entries(clientHeaders)) headers[name.toLowerCase()] = value;
  return {
    url: `${target.baseURL}${path}`,
    method: 'POST',
    headers: { ...headers, ...toHeaders(target, options, false) },
    body: JSON.stringify(body),
  };
}

/**
 * The health check of an Anthropic deployment: `GET {baseURL}/models` (Anthropic's model list) with its credentials
 * and API version; it costs no tokens.
 *
 * @example
 * buildAnthropicHealthCheckRequest(target).url; // 'https://api.anthropic.com/v1/models'
 */
export function buildAnthropicHealthCheckRequest(target: UpstreamTarget): UpstreamRequest {
  const options = readOptions(target.options);
  return {
    url: `${target.baseURL}/models`,
    method: 'GET',
    headers: {
      'anthropic-version': options.anthropicVersion ?? defaultAnthropicVersion,
      ...toHeaders(target, options, false),
    },
    body: undefined,
  };
}

const anthropicNativePaths: Partial<Record<ClientDialectId, string>> = {
  'anthropic-messages': '/messages',
  'anthropic-count-tokens': '/messages/count_tokens',
};

/** The checks only this provider needs; the features it lacks are declared (chatFeatures) and checked by the core. */
function rejectInexpressible(request: CanonicalChatRequest): void {
  if (request.temperature !== undefined && (request.temperature < 0 || request.temperature > 1)) {
    throw invalidRequest('Anthropic models accept a temperature between 0 and 1.', 'temperature');
  }
}

function readOptions(options: Record<string, unknown>): AnthropicOptions {
  const parsed = anthropicOptionsSchema.safeParse(options);
  if (parsed.success) return parsed.data;
  const fields = parsed.error.issues.map((issue) => issue.path.join('.')).join(', ');
  throw new GatewayError({
    status: 500,
    type: 'api_error',
    code: 'invalid_provider_options',
    provider: 'anthropic',
    message: `The gateway's Anthropic deployment has invalid options: ${fields}.`,
  });
}

/** The request headers: the defaults (left out when `withDefaults` is false), the key, then the config's headers. */
function toHeaders(target: UpstreamTarget, options: AnthropicOptions, withDefaults = true): Record<string, string> {
  const headers: Record<string, string> = withDefaults
    ? { 'content-type': 'application/json', 'anthropic-version': options.anthropicVersion ?? defaultAnthropicVersion }
    : {};
  if (target.apiKey !== undefined) headers['x-api-key'] = target.apiKey;
  // Lower-cased so that a configured `Anthropic-Version` replaces the default instead of doubling it.
  for (const [name, value] of Object.entries(target.headers)) headers[name.toLowerCase()] = value;
  return headers;
}

function toThinkingBudget(request: CanonicalChatRequest): number | undefined {
  if (request.reasoningEffort === undefined || request.reasoningEffort === 'none') return undefined;
  const budget = request.reasoningBudgetTokens ?? thinkingBudgetByEffort[request.reasoningEffort];
  if (request.maxTokens === undefined) return budget;
  const capped = Math.min(budget, request.maxTokens - 1);
  if (capped < minimumThinkingBudget) {
    throw invalidRequest(
      `With reasoning_effort, Anthropic needs max_tokens above ${minimumThinkingBudget} (its minimum thinking budget).`,
      'max_tokens',
    );
  }
  return capped;
}

type ToolFields = Pick<AnthropicMessagesRequestBody, 'tools' | 'tool_choice' | 'output_config'>;

function toToolFields(request: CanonicalChatRequest, options: AnthropicOptions, thinking: boolean): ToolFields {
  const native = options.structuredOutputs === 'native';
  const tools = (request.tools ?? []).map((tool) => toAnthropicTool(tool, native));
  validateTools(tools, request.toolChoice);
  const format = request.responseFormat;

  if (format?.type === 'json_schema' && native) {
    const fields: ToolFields = { output_config: { format: { type: 'json_schema', schema: format.schema } } };
    return tools.length === 0 ? fields : { ...fields, ...toPlainToolFields(tools, request) };
  }
  if (format?.type === 'json_schema' || format?.type === 'json_object') {
    if (thinking) {
      throw invalidRequest(
        'This Anthropic deployment answers response_format through forced tool use, which extended thinking ' +
          '(reasoning_effort) does not allow. Drop one of them, or use a json_schema response_format on a deployment ' +
          'with native structured outputs.',
        'response_format',
      );
    }
    const schema = format.type === 'json_schema' ? toJsonToolSchema(format.schema) : { type: 'object' };
    const description =
      format.type === 'json_schema' && format.description !== undefined
        ? format.description
        : jsonResponseToolDescription;
    const jsonTool: AnthropicTool = { name: jsonResponseToolName, description, input_schema: schema };
    const choice = request.toolChoice;
    const forced: AnthropicToolChoice =
      tools.length === 0 || choice?.type === 'none'
        ? { type: 'tool', name: jsonResponseToolName, disable_parallel_tool_use: true }
        : choice?.type === 'tool'
          ? { type: 'tool', name: choice.name }
          : { type: 'any' };
    return { tools: [...tools, jsonTool], tool_choice: withParallelToolUse(forced, request.parallelToolCalls) };
  }
  return tools.length === 0 ? {} : toPlainToolFields(tools, request);
}

function toPlainToolFields(tools: AnthropicTool[], request: CanonicalChatRequest): ToolFields {
  const choice = toAnthropicToolChoice(request.toolChoice, request.parallelToolCalls);
  return choice === undefined ? { tools } : { tools, tool_choice: choice };
}

function toAnthropicTool(tool: CanonicalTool, native: boolean): AnthropicTool {
  const anthropicTool: AnthropicTool = { name: tool.name, input_schema: { type: 'object', ...tool.parameters } };
  if (tool.description !== undefined) anthropicTool.description = tool.description;
  if (native && tool.strict !== undefined) anthropicTool.strict = tool.strict;
  return anthropicTool;
}

function validateTools(tools: AnthropicTool[], choice: CanonicalToolChoice | undefined): void {
  const index = tools.findIndex((tool) => tool.name === jsonResponseToolName);
  if (index !== -1)
    throw invalidRequest(
      `The tool name '${jsonResponseToolName}' is reserved by the gateway.`,
      `tools.[${index}].function.name`,
    );
  if (choice?.type === 'tool' && !tools.some((tool) => tool.name === choice.name)) {
    throw invalidRequest(`tool_choice names '${choice.name}', which is not among the tools.`, 'tool_choice');
  }
}

/** A tool's input schema must describe an object; a JSON answer whose schema describes anything else cannot use one. */
function toJsonToolSchema(schema: Record<string, unknown>): Record<string, unknown> {
  if (schema.type !== undefined && schema.type !== 'object') {
    throw invalidRequest(
      'Anthropic can only produce JSON objects: the response schema must have type "object".',
      'response_format.json_schema.schema',
    );
  }
  return { type: 'object', ...schema };
}

/**
 * Maps OpenAI's `tool_choice`: `required` is Anthropic's `any`. Without a client choice, `auto` is sent only to carry
 * `disable_parallel_tool_use` for `parallel_tool_calls: false`.
 */
function toAnthropicToolChoice(
  choice: CanonicalToolChoice | undefined,
  parallelToolCalls: boolean | undefined,
): AnthropicToolChoice | undefined {
  if (choice === undefined)
    return parallelToolCalls === false ? { type: 'auto', disable_parallel_tool_use: true } : undefined;
  switch (choice.type) {
    case 'none':
      return { type: 'none' };
    case 'auto':
      return withParallelToolUse({ type: 'auto' }, parallelToolCalls);
    case 'required':
      return withParallelToolUse({ type: 'any' }, parallelToolCalls);
    case 'tool':
      return withParallelToolUse({ type: 'tool', name: choice.name }, parallelToolCalls);
  }
}

function withParallelToolUse(choice: AnthropicToolChoice, parallelToolCalls: boolean | undefined): AnthropicToolChoice {
  return parallelToolCalls === false && choice.type !== 'none'
    ? { ...choice, disable_parallel_tool_use: true }
    : choice;
}
