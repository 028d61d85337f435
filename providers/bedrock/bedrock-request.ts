import type {
  CanonicalChatRequest,
  CanonicalTool,
  CanonicalToolChoice,
  UpstreamRequest,
  UpstreamTarget,
} from '../../src/canonical/index.ts';
import { invalidRequest } from '../../src/errors.ts';
import { jsonResponseToolDescription, jsonResponseToolName } from '../anthropic/anthropic-json-response.ts';
import { bedrockBaseURL, bedrockCredentials, readBedrockOptions, type BedrockOptions } from './bedrock-options.ts';
import {
  toBedrockConversation,
  type BedrockConversation,
  type BedrockRequestMessage,
} from './bedrock-request-messages.ts';
import { authorizeBedrockRequest } from './bedrock-signing.ts';

/** A tool definition in Converse's shape. */
export interface BedrockTool {
  toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } };
}

/** Converse's `toolChoice` (it has no `none`: not calling tools is expressed by declaring none). */
export type BedrockToolChoice =
  { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };

/** The body of `POST /model/{modelId}/converse` (and `converse-stream`), as far as the gateway fills it. */
export interface BedrockConverseRequestBody {
  messages: BedrockRequestMessage[];
  system?: { text: string }[];
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: { tools: BedrockTool[]; toolChoice?: BedrockToolChoice };
  additionalModelRequestFields?: Record<string, unknown>;
}

/** The `maxTokens` sent with reasoning on when the client set none, before the thinking budget is added. */
export const defaultBedrockReasoningMaxTokens = 4096;

/**
 * Claude's extended-thinking budgets for OpenAI's `reasoning_effort`, as the Anthropic translator maps them (Claude's
 * minimum budget is 1024 tokens); an explicit budget (`reasoningBudgetTokens`) wins.
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
 * The URL of a model operation: `{base}/model/{modelId}/{operation}`, the model id URI-encoded as one path segment
 * (inference profile ids and ARNs hold `:` and `/`).
 *
 * @example
 * bedrockModelURL('https://bedrock-runtime.us-east-1.amazonaws.com', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'converse');
 * // 'https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse'
 */
export function bedrockModelURL(
  baseURL: string,
  model: string,
  operation: 'converse' | 'converse-stream' | 'invoke' | 'invoke-with-response-stream',
): string {
  return `${baseURL}/model/${encodeURIComponent(model)}/${operation}`;
}

/**
 * Builds Bedrock's Converse request (`POST /model/{modelId}/converse`, or `converse-stream` for a stream) from a
 * canonical chat request, signed with SigV4 or carrying a Bedrock API key (see `bedrock-signing.ts`).
 *
 * What does not map one to one:
 * - `max_tokens`, `temperature`, `top_p` and `stop` go to `inferenceConfig`; Converse takes a temperature of 0 to 1
 *   only, so a higher one is a 400. `top_k` goes to `additionalModelRequestFields` under the model's own name
 *   (`top_k`; Amazon Nova's `inferenceConfig.topK`).
 * - `reasoning_effort` (or an explicit budget) turns on Claude's extended thinking through
 *   `additionalModelRequestFields.thinking`, with the Anthropic translator's budgets; without `max_tokens`, `maxTokens`
 *   is `options.defaultMaxTokens` (or 4096) plus the budget. Other model families take other reasoning fields, which
 *   the gateway does not map: for a model id that names another family it is a 400 (an inference profile ARN, which
 *   names none, is taken to be Claude).
 * - Tools go to `toolConfig` (`auto` / `any` for `required` / `tool`). `tool_choice: "none"` declares no tools, but
 *   Converse refuses `toolUse`/`toolResult` blocks without a `toolConfig`: when the history holds some, the client's
 *   tools (or, when it sent none, the history's tool names with an open object schema) are declared with the default
 *   choice, so the model could still call one. `parallel_tool_calls` has no Converse field and is ignored.
 * - `response_format` json: a forced tool, as the Anthropic translator does (`anthropic-json-response.ts`, the same
 *   reserved tool name); the response readers turn its call back into the answer's text. Forced tool use and Claude's
 *   extended thinking exclude each other: both together are a 400. Models that cannot be forced to a tool (Converse's
 *   `any`/`tool` choices work on Claude, Mistral Large and Nova) answer Bedrock's own 400.
 * - `seed`, penalties, `user` and message names are dropped: Converse has no such fields.
 *
 * @example
 * const upstream = await buildBedrockChatRequest(request, {
 *   providerName: 'bedrock', baseURL: '', model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', apiKey: undefined,
 *   headers: {}, options: { region: 'us-east-1', accessKeyId: 'AKIA...', secretAccessKey: '...' },
 * });
 * // upstream.url === 'https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse'
 */
export async function buildBedrockChatRequest(
  request: CanonicalChatRequest,
  target: UpstreamTarget,
): Promise<UpstreamRequest> {
  if (request.temperature !== undefined && (request.temperature < 0 || request.temperature > 1)) {
    throw invalidRequest('Bedrock models accept a temperature between 0 and 1.', 'temperature');
  }
  const options = readBedrockOptions(target.options);
  const baseURL = bedrockBaseURL(target, options);
  const credentials = bedrockCredentials(target, options, baseURL);
  const body = toConverseBody(request, target.model, options);
  return authorizeBedrockRequest(
    {
      url: bedrockModelURL(baseURL, target.model, request.stream ? 'converse-stream' : 'converse'),
      headers: {
        'content-type': 'application/json',
        accept: request.stream ? 'application/vnd.amazon.eventstream' : 'application/json',
        ...lowerCased(target.headers),
      },
      body: JSON.stringify(body),
    },
    credentials,
  );
}

/** The Converse body of a canonical request (exported for tests; {@link buildBedrockChatRequest} signs it). */
export function toConverseBody(
  request: CanonicalChatRequest,
  model: string,
  options: BedrockOptions,
): BedrockConverseRequestBody {
  const conversation = toBedrockConversation(request.messages);
  const thinkingBudget = toThinkingBudget(request, model);
  const body: BedrockConverseRequestBody = { messages: conversation.messages };
  if (conversation.system !== undefined) body.system = conversation.system;

  const inferenceConfig: NonNullable<BedrockConverseRequestBody['inferenceConfig']> = {};
  const maxTokens =
    request.maxTokens ??
    (thinkingBudget === undefined
      ? options.defaultMaxTokens
      : (options.defaultMaxTokens ?? defaultBedrockReasoningMaxTokens) + thinkingBudget);
  if (maxTokens !== undefined) inferenceConfig.maxTokens = maxTokens;
  if (request.temperature !== undefined) inferenceConfig.temperature = request.temperature;
  if (request.topP !== undefined) inferenceConfig.topP = request.topP;
  if (request.stop !== undefined && request.stop.length > 0) inferenceConfig.stopSequences = request.stop;
  if (Object.keys(inferenceConfig).length > 0) body.inferenceConfig = inferenceConfig;

  const toolConfig = toToolConfig(request, conversation, thinkingBudget !== undefined);
  if (toolConfig !== undefined) body.toolConfig = toolConfig;

  const additional: Record<string, unknown> = {};
  if (thinkingBudget !== undefined) additional.thinking = { type: 'enabled', budget_tokens: thinkingBudget };
  if (request.topK !== undefined) {
    if (isNova(model)) additional.inferenceConfig = { topK: request.topK };
    else additional.top_k = request.topK;
  }
  if (Object.keys(additional).length > 0) body.additionalModelRequestFields = additional;
  return body;
}

function isNova(model: string): boolean {
  return /(^|[.:/])amazon\.nova/.test(model);
}

/** Whether a model id may be a Claude model: it names Anthropic, or it is an ARN (an inference profile names no model). */
function mayBeClaude(model: string): boolean {
  return model.includes('anthropic') || model.startsWith('arn:');
}

function toThinkingBudget(request: CanonicalChatRequest, model: string): number | undefined {
  if (request.reasoningEffort === undefined || request.reasoningEffort === 'none') return undefined;
  if (!mayBeClaude(model)) {
    throw invalidRequest(
      `The gateway maps reasoning settings to Bedrock only for Claude models (extended thinking); ${model} takes ` +
        'other fields. Leave reasoning_effort out for this model.',
      'reasoning_effort',
    );
  }
  const budget = request.reasoningBudgetTokens ?? thinkingBudgetByEffort[request.reasoningEffort];
  if (request.maxTokens === undefined) return budget;
  const capped = Math.min(budget, request.maxTokens - 1);
  if (capped < minimumThinkingBudget) {
    throw invalidRequest(
      `With reasoning_effort, Claude on Bedrock needs max_tokens above ${minimumThinkingBudget} (its minimum thinking budget).`,
      'max_tokens',
    );
  }
  return capped;
}

function toToolConfig(
  request: CanonicalChatRequest,
  conversation: BedrockConversation,
  thinking: boolean,
): BedrockConverseRequestBody['toolConfig'] {
  const tools = (request.tools ?? []).map(toBedrockTool);
  validateTools(tools, request.toolChoice);
  const choice = request.toolChoice;
  const format = request.responseFormat;

  if (format?.type === 'json_schema' || format?.type === 'json_object') {
    if (thinking) {
      throw invalidRequest(
        'Bedrock answers response_format through forced tool use, which extended thinking (reasoning_effort) does ' +
          'not allow. Drop one of them.',
        'response_format',
      );
    }
    const schema = format.type === 'json_schema' ? toJsonToolSchema(format.schema) : { type: 'object' };
    const description =
      format.type === 'json_schema' && format.description !== undefined
        ? format.description
        : jsonResponseToolDescription;
    const jsonTool: BedrockTool = {
      toolSpec: { name: jsonResponseToolName, description, inputSchema: { json: schema } },
    };
    const declared = tools.length > 0 ? tools : historyTools(conversation);
    const forced: BedrockToolChoice =
      declared.length === 0 || choice?.type === 'none'
        ? { tool: { name: jsonResponseToolName } }
        : choice?.type === 'tool'
          ? { tool: { name: choice.name } }
          : { any: {} };
    return { tools: [...declared, jsonTool], toolChoice: forced };
  }

  if (choice?.type === 'none' || tools.length === 0) {
    // Converse refuses toolUse/toolResult blocks without a toolConfig: declare tools then, with the default choice.
    if (!conversation.hasToolBlocks) return undefined;
    const declared = tools.length > 0 ? tools : historyTools(conversation);
    return declared.length > 0 ? { tools: declared } : undefined;
  }
  const toolChoice = toBedrockToolChoice(choice);
  return toolChoice === undefined ? { tools } : { tools, toolChoice };
}

/** The history's tools, declared with an open object schema, for a request that sends tool blocks but no tools. */
function historyTools(conversation: BedrockConversation): BedrockTool[] {
  return conversation.historyToolNames.map((name) => ({
    toolSpec: { name, inputSchema: { json: { type: 'object' } } },
  }));
}

function toBedrockTool(tool: CanonicalTool): BedrockTool {
  const spec: BedrockTool['toolSpec'] = {
    name: tool.name,
    inputSchema: { json: { type: 'object', ...tool.parameters } },
  };
  if (tool.description !== undefined && tool.description.length > 0) spec.description = tool.description;
  return { toolSpec: spec };
}

function validateTools(tools: BedrockTool[], choice: CanonicalToolChoice | undefined): void {
  const index = tools.findIndex((tool) => tool.toolSpec.name === jsonResponseToolName);
  if (index !== -1) {
    throw invalidRequest(
      `The tool name '${jsonResponseToolName}' is reserved by the gateway.`,
      `tools.[${index}].function.name`,
    );
  }
  if (choice?.type === 'tool' && !tools.some((tool) => tool.toolSpec.name === choice.name)) {
    throw invalidRequest(`tool_choice names '${choice.name}', which is not among the tools.`, 'tool_choice');
  }
}

/** A tool's input schema must describe an object; a JSON answer whose schema describes anything else cannot use one. */
function toJsonToolSchema(schema: Record<string, unknown>): Record<string, unknown> {
  if (schema.type !== undefined && schema.type !== 'object') {
    throw invalidRequest(
      'Bedrock answers JSON through a tool, which can only produce objects: the response schema must have type "object".',
      'response_format.json_schema.schema',
    );
  }
  return { type: 'object', ...schema };
}

function toBedrockToolChoice(choice: CanonicalToolChoice | undefined): BedrockToolChoice | undefined {
  switch (choice?.type) {
    case undefined:
    case 'none':
      return undefined;
    case 'auto':
      return { auto: {} };
    case 'required':
      return { any: {} };
    case 'tool':
      return { tool: { name: choice.name } };
  }
}

/** The config's headers, names lower-cased so one replaces a default of the same name instead of doubling it. */
export function lowerCased(headers: Record<string, string>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) result[name.toLowerCase()] = value;
  return result;
}
