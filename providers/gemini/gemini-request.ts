import type {
  CanonicalChatRequest,
  CanonicalToolChoice,
  UpstreamRequest,
  UpstreamTarget,
} from '../../src/canonical/index.ts';
import { invalidRequest } from '../../src/errors.ts';
import { toGeminiJsonSchema, toGeminiParametersSchema } from './gemini-json-schema.ts';
import { readGeminiOptions, type GeminiOptions } from './gemini-options.ts';
import { toGeminiConversation, type GeminiContent } from './gemini-request-contents.ts';
import { toGeminiThinkingConfig, type GeminiThinkingConfig } from './gemini-thinking.ts';

/** A function the model may call, with its parameters as JSON Schema (see `gemini-json-schema.ts`). */
export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parametersJsonSchema: Record<string, unknown>;
}

/** Gemini's `toolConfig.functionCallingConfig`. */
export interface GeminiFunctionCallingConfig {
  mode: 'AUTO' | 'ANY' | 'NONE';
  allowedFunctionNames?: string[];
}

/** Gemini's `generationConfig`, as far as the gateway fills it. */
export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseJsonSchema?: Record<string, unknown>;
  thinkingConfig?: GeminiThinkingConfig;
}

/**
 * The body of `models/{model}:generateContent` and `:streamGenerateContent`, the same on the Gemini API and on
 * Vertex AI.
 */
export interface GeminiGenerateContentBody {
  contents: GeminiContent[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: [{ functionDeclarations: GeminiFunctionDeclaration[] }];
  toolConfig?: { functionCallingConfig: GeminiFunctionCallingConfig };
  generationConfig?: GeminiGenerationConfig;
  safetySettings?: { category: string; threshold: string }[];
}

/** The Gemini API's base URL, for the preset. */
export const defaultGeminiBaseURL = 'https://generativelanguage.googleapis.com/v1beta';

/**
 * Builds the Gemini `generateContent` body of a canonical chat request, without URL or credentials, so the Gemini API
 * and Vertex AI translators share it. `model` is the upstream model (it decides the thinking control, see
 * `gemini-thinking.ts`).
 *
 * What does not map one to one:
 * - Messages: see `toGeminiConversation` (system instruction, roles, media, function calls and responses, thought
 *   signatures).
 * - Tools become one `functionDeclarations` tool with `parametersJsonSchema` (see `gemini-json-schema.ts` for why and
 *   for the conversion rule); `tool_choice` becomes `functionCallingConfig`: `auto` AUTO, `none` NONE, `required`
 *   ANY, a named tool ANY with `allowedFunctionNames: [name]`. Gemini has no switch for parallel calls, so
 *   `parallel_tool_calls` is ignored.
 * - `response_format`: `json_object` is `responseMimeType: application/json`; `json_schema` adds `responseJsonSchema`.
 * - Reasoning: see `toGeminiThinkingConfig`.
 * - `n` is `candidateCount`, `stop` `stopSequences`, `max_tokens` `maxOutputTokens`; `seed` is sent; penalties only
 *   when non-zero and the deployment's `sendPenalties` allows (see `gemini-options.ts`). `user` has no Gemini field
 *   and is dropped.
 * - The deployment's `safetySettings` are sent as configured.
 *
 * @example
 * const body = buildGeminiGenerateContentBody(request, 'gemini-2.5-flash', {});
 * // { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] }
 */
export function buildGeminiGenerateContentBody(
  request: CanonicalChatRequest,
  model: string,
  options: GeminiOptions,
): GeminiGenerateContentBody {
  const { systemInstruction, contents } = toGeminiConversation(request.messages);
  const body: GeminiGenerateContentBody = { contents };
  if (systemInstruction !== undefined) body.systemInstruction = systemInstruction;
  const tools = request.tools ?? [];
  if (tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: tools.map((tool) => ({
          name: tool.name,
          ...(tool.description === undefined ? {} : { description: tool.description }),
          parametersJsonSchema: toGeminiParametersSchema(tool.parameters),
        })),
      },
    ];
  }
  const functionCallingConfig = toFunctionCallingConfig(
    request.toolChoice,
    tools.map((tool) => tool.name),
  );
  if (functionCallingConfig !== undefined) body.toolConfig = { functionCallingConfig };
  const generationConfig = toGenerationConfig(request, model, options);
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  if (options.safetySettings !== undefined && options.safetySettings.length > 0) {
    body.safetySettings = options.safetySettings;
  }
  return body;
}

/**
 * Builds the Gemini API request: `POST {baseURL}/models/{model}:generateContent`, or
 * `:streamGenerateContent?alt=sse` for a stream, with the key in the `x-goog-api-key` header (never in the query
 * string, where it would land in access logs) and the config's headers over the defaults.
 *
 * @example
 * const upstream = buildGeminiChatRequest(request, {
 *   providerName: 'gemini', baseURL: 'https://generativelanguage.googleapis.com/v1beta', model: 'gemini-2.5-flash',
 *   apiKey: 'AIza...', headers: {}, options: {},
 * });
 * // upstream.url === 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent'
 */
export function buildGeminiChatRequest(request: CanonicalChatRequest, target: UpstreamTarget): UpstreamRequest {
  const options = readGeminiOptions(target.options, target.providerName);
  const body = buildGeminiGenerateContentBody(request, target.model, options);
  const method = request.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return {
    url: `${target.baseURL}/${geminiModelPath(target.model)}:${method}`,
    method: 'POST',
    headers: geminiHeaders(target),
    body: JSON.stringify(body),
  };
}

/**
 * The health check of a Gemini API deployment: `GET {baseURL}/models/{model}` (the model's metadata) with the key;
 * it costs no tokens and also says whether the configured model exists.
 *
 * @example
 * buildGeminiHealthCheckRequest(target).url; // 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash'
 */
export function buildGeminiHealthCheckRequest(target: UpstreamTarget): UpstreamRequest {
  const { 'content-type': _contentType, ...headers } = geminiHeaders(target);
  return { url: `${target.baseURL}/${geminiModelPath(target.model)}`, method: 'GET', headers, body: undefined };
}

/**
 * The model's resource path, `models/<model>`; a configured name already of that form is kept.
 *
 * @example
 * geminiModelPath('gemini-2.5-flash'); // 'models/gemini-2.5-flash'
 */
export function geminiModelPath(model: string): string {
  return model.startsWith('models/') || model.startsWith('tunedModels/') ? model : `models/${model}`;
}

/** The Gemini API's request headers: JSON, the key in `x-goog-api-key`, then the config's headers (lower-cased). */
export function geminiHeaders(target: UpstreamTarget): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (target.apiKey !== undefined) headers['x-goog-api-key'] = target.apiKey;
  for (const [name, value] of Object.entries(target.headers)) headers[name.toLowerCase()] = value;
  return headers;
}

function toFunctionCallingConfig(
  choice: CanonicalToolChoice | undefined,
  toolNames: readonly string[],
): GeminiFunctionCallingConfig | undefined {
  if (choice === undefined) return undefined;
  switch (choice.type) {
    case 'auto':
      return toolNames.length === 0 ? undefined : { mode: 'AUTO' };
    case 'none':
      return toolNames.length === 0 ? undefined : { mode: 'NONE' };
    case 'required':
      if (toolNames.length === 0)
        throw invalidRequest('tool_choice "required" needs at least one tool.', 'tool_choice');
      return { mode: 'ANY' };
    case 'tool':
      if (!toolNames.includes(choice.name)) {
        throw invalidRequest(`tool_choice names '${choice.name}', which is not among the tools.`, 'tool_choice');
      }
      return { mode: 'ANY', allowedFunctionNames: [choice.name] };
  }
}

function toGenerationConfig(
  request: CanonicalChatRequest,
  model: string,
  options: GeminiOptions,
): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.topK !== undefined) config.topK = request.topK;
  if (request.maxTokens !== undefined) config.maxOutputTokens = request.maxTokens;
  if (request.stop !== undefined && request.stop.length > 0) config.stopSequences = request.stop;
  if (request.n !== undefined && request.n !== 1) config.candidateCount = request.n;
  if (request.seed !== undefined) config.seed = request.seed;
  if (options.sendPenalties === true) {
    if (request.presencePenalty !== undefined && request.presencePenalty !== 0) {
      config.presencePenalty = request.presencePenalty;
    }
    if (request.frequencyPenalty !== undefined && request.frequencyPenalty !== 0) {
      config.frequencyPenalty = request.frequencyPenalty;
    }
  }
  const format = request.responseFormat;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    config.responseJsonSchema = toGeminiJsonSchema(format.schema);
  }
  const thinkingConfig = toGeminiThinkingConfig(request, model, options);
  if (thinkingConfig !== undefined) config.thinkingConfig = thinkingConfig;
  return config;
}
