import type {
  ClientDialectId,
  CanonicalChatRequest,
  CanonicalContentPart,
  CanonicalEmbeddingsRequest,
  CanonicalMessage,
  CanonicalResponseFormat,
  CanonicalTool,
  CanonicalToolChoice,
  UpstreamRequest,
  UpstreamTarget,
} from '../../src/canonical/index.ts';
import { GatewayError, invalidRequest } from '../../src/errors.ts';
import { openAICompatibleProviderId } from './openai-compatible-error.ts';

/**
 * Deployment options (`options` in the config) this translator reads.
 *
 * - `maxTokensField`: the wire name of the output token limit. OpenAI deprecated `max_tokens` in favour of
 *   `max_completion_tokens` and its reasoning models (o-series, gpt-5) reject `max_tokens`, but most
 *   OpenAI-compatible servers (vLLM, Ollama, Groq, DeepSeek ...) only know `max_tokens`. The default is therefore
 *   `max_tokens`, except on the `openai` preset, whose default is `max_completion_tokens`.
 * - `sendTopK`: whether `topK` is sent as `top_k`. OpenAI rejects unknown fields, so it is dropped by default;
 *   vLLM, Together, Fireworks and OpenRouter accept it.
 */
export interface OpenAICompatibleOptions {
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  sendTopK: boolean;
}

/** The problems of a deployment's options (`<option>: <reason>`), checked at start; empty when they are valid. */
export function validateOpenAICompatibleOptions(options: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const { maxTokensField, sendTopK } = options;
  if (maxTokensField !== undefined && maxTokensField !== 'max_tokens' && maxTokensField !== 'max_completion_tokens')
    problems.push(
      `maxTokensField: must be "max_tokens" or "max_completion_tokens", got ${JSON.stringify(maxTokensField)}`,
    );
  if (sendTopK !== undefined && typeof sendTopK !== 'boolean')
    problems.push(`sendTopK: must be true or false, got ${JSON.stringify(sendTopK)}`);
  return problems;
}

/** Reads and checks {@link OpenAICompatibleOptions}; a wrong value is a gateway configuration error (500). */
export function readOpenAICompatibleOptions(options: Record<string, unknown>): OpenAICompatibleOptions {
  const { maxTokensField = 'max_tokens', sendTopK = false } = options;
  if (
    (maxTokensField !== 'max_tokens' && maxTokensField !== 'max_completion_tokens') ||
    typeof sendTopK !== 'boolean'
  ) {
    throw new GatewayError({
      status: 500,
      type: 'api_error',
      code: 'invalid_provider_options',
      provider: openAICompatibleProviderId,
      message: `Invalid ${openAICompatibleProviderId} deployment options: maxTokensField must be "max_tokens" or "max_completion_tokens", sendTopK a boolean.`,
    });
  }
  return { maxTokensField, sendTopK };
}

/** An OpenAI chat content part as sent upstream. */
type WireContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
  | { type: 'file'; file: { file_data: string; filename: string } };

/** An OpenAI chat message as sent upstream. */
type WireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | WireContentPart[]; name?: string }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[]; name?: string }
  | { role: 'tool'; tool_call_id: string; content: string };

interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

function toWireContentPart(part: CanonicalContentPart): WireContentPart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  if (part.type === 'file') return toWireFilePart(part);
  return {
    type: 'image_url',
    image_url: part.detail === undefined ? { url: part.url } : { url: part.url, detail: part.detail },
  };
}

/**
 * A file as OpenAI's `file` content part: inline bytes as a `data:` URL in `file_data` (OpenAI takes PDFs this way);
 * OpenAI chat has no field for a file by URL, so one is refused with a 400.
 */
function toWireFilePart(part: Extract<CanonicalContentPart, { type: 'file' }>): WireContentPart {
  if (part.data === undefined) {
    throw invalidRequest(
      'OpenAI-compatible upstreams take files only as inline bytes (base64), not by URL.',
      'messages',
      'unsupported_parameter',
    );
  }
  return {
    type: 'file',
    file: { file_data: `data:${part.mediaType};base64,${part.data}`, filename: part.filename ?? 'document.pdf' },
  };
}

/**
 * User content: a single text part goes as a plain string (the form every OpenAI-compatible server accepts, while
 * several text-only servers reject arrays); anything else as an array of parts.
 */
function toWireUserContent(content: CanonicalContentPart[]): string | WireContentPart[] {
  if (content.length === 0) return '';
  const [first] = content;
  if (content.length === 1 && first?.type === 'text') return first.text;
  return content.map(toWireContentPart);
}

/** Assistant content is text only on the wire; parts are concatenated (as the OpenAI SDKs read them back). */
function toWireAssistantContent(content: CanonicalContentPart[], index: number): string {
  return content
    .map((part) => {
      if (part.type === 'text') return part.text;
      throw invalidRequest(
        'OpenAI-compatible upstreams accept no images in assistant messages.',
        `messages.[${index}].content`,
      );
    })
    .join('');
}

function toWireMessage(message: CanonicalMessage, index: number): WireMessage {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return {
        role: 'user',
        content: toWireUserContent(message.content),
        ...(message.name === undefined ? {} : { name: message.name }),
      };
    case 'assistant': {
      const text = toWireAssistantContent(message.content, index);
      const hasToolCalls = message.toolCalls.length > 0;
      return {
        role: 'assistant',
        // OpenAI's own shape for a tool-calling turn without text is `content: null`.
        content: text === '' && hasToolCalls ? null : text,
        // Omitted when empty: several servers reject `tool_calls: []`.
        ...(hasToolCalls
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
        ...(message.name === undefined ? {} : { name: message.name }),
      };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

function toWireTool(tool: CanonicalTool): Record<string, unknown> {
  return {
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      parameters: tool.parameters,
      ...(tool.strict === undefined ? {} : { strict: tool.strict }),
    },
  };
}

function toWireToolChoice(choice: CanonicalToolChoice): string | Record<string, unknown> {
  return choice.type === 'tool' ? { type: 'function', function: { name: choice.name } } : choice.type;
}

function toWireResponseFormat(format: CanonicalResponseFormat): Record<string, unknown> {
  if (format.type !== 'json_schema') return { type: format.type };
  return {
    type: 'json_schema',
    json_schema: {
      name: format.name,
      ...(format.description === undefined ? {} : { description: format.description }),
      schema: format.schema,
      ...(format.strict === undefined ? {} : { strict: format.strict }),
    },
  };
}

/**
 * The headers of every upstream call: JSON, the bearer key when the deployment has one (local servers such as
 * Ollama need none), then the config's extra headers, which win (e.g. Azure's `api-key`, OpenRouter's `X-Title`).
 */
export function openAICompatibleHeaders(target: UpstreamTarget): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...(target.apiKey === undefined || target.apiKey === '' ? {} : { authorization: `Bearer ${target.apiKey}` }),
    ...target.headers,
  };
}

function endpoint(target: UpstreamTarget, path: string): string {
  return `${target.baseURL.replace(/\/+$/, '')}${path}`;
}

/**
 * The health check of an OpenAI-compatible deployment: `GET {baseURL}/models` with its credentials (OpenAI, vLLM,
 * Groq, Together, OpenRouter and Ollama's OpenAI API all serve it; it costs no tokens).
 *
 * @example
 * buildOpenAICompatibleHealthCheckRequest(target).url; // 'https://api.openai.com/v1/models'
 */
export function buildOpenAICompatibleHealthCheckRequest(target: UpstreamTarget): UpstreamRequest {
  const { 'content-type': _contentType, ...headers } = openAICompatibleHeaders(target);
  return { url: endpoint(target, '/models'), method: 'GET', headers, body: undefined };
}

/**
 * Builds `POST {baseURL}/chat/completions` from a canonical chat request. Every canonical field maps to its OpenAI
 * wire name; absent fields are omitted so the upstream's defaults apply; `model` is the deployment's upstream model.
 * Streams always ask for `stream_options.include_usage`, whatever the client asked: usage is recorded from the
 * provider's own numbers, never estimated (the client-facing renderer drops the usage chunk if it was not asked for).
 *
 * @example
 * const upstream = buildOpenAICompatibleChatRequest(
 *   { model: 'fast', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }], stream: false, streamIncludeUsage: false },
 *   { providerName: 'openai', baseURL: 'https://api.openai.com/v1', model: 'gpt-4o-mini', apiKey: 'sk-...', headers: {}, options: {} },
 * );
 * // upstream.url === 'https://api.openai.com/v1/chat/completions'
 * // upstream.body === '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}'
 */
export function buildOpenAICompatibleChatRequest(
  request: CanonicalChatRequest,
  target: UpstreamTarget,
): UpstreamRequest {
  const options = readOpenAICompatibleOptions(target.options);
  const body: Record<string, unknown> = { model: target.model, messages: request.messages.map(toWireMessage) };
  if (request.maxTokens !== undefined) body[options.maxTokensField] = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.topK !== undefined && options.sendTopK) body.top_k = request.topK;
  if (request.stop !== undefined && request.stop.length > 0) body.stop = request.stop;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.user !== undefined) body.user = request.user;
  if (request.n !== undefined) body.n = request.n;
  if (request.presencePenalty !== undefined) body.presence_penalty = request.presencePenalty;
  if (request.frequencyPenalty !== undefined) body.frequency_penalty = request.frequencyPenalty;
  if (request.logprobs !== undefined) body.logprobs = request.logprobs;
  if (request.topLogprobs !== undefined) body.top_logprobs = request.topLogprobs;
  // OpenAI rejects tool_choice and parallel_tool_calls without tools, so they go only with tools.
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map(toWireTool);
    if (request.toolChoice !== undefined) body.tool_choice = toWireToolChoice(request.toolChoice);
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  }
  if (request.responseFormat !== undefined) body.response_format = toWireResponseFormat(request.responseFormat);
  if (request.reasoningEffort !== undefined) body.reasoning_effort = request.reasoningEffort;
  if (request.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return {
    url: endpoint(target, '/chat/completions'),
    method: 'POST',
    headers: openAICompatibleHeaders(target),
    body: JSON.stringify(body),
  };
}

/**
 * Builds `POST {baseURL}/embeddings` from a canonical embeddings request.
 *
 * @example
 * buildOpenAICompatibleEmbeddingsRequest({ model: 'embed', input: ['hello'] }, target).body;
 * // '{"model":"text-embedding-3-small","input":["hello"]}'
 */
export function buildOpenAICompatibleEmbeddingsRequest(
  request: CanonicalEmbeddingsRequest,
  target: UpstreamTarget,
): UpstreamRequest {
  const body: Record<string, unknown> = { model: target.model, input: request.input };
  if (request.encodingFormat !== undefined) body.encoding_format = request.encodingFormat;
  if (request.dimensions !== undefined) body.dimensions = request.dimensions;
  if (request.user !== undefined) body.user = request.user;
  return {
    url: endpoint(target, '/embeddings'),
    method: 'POST',
    headers: openAICompatibleHeaders(target),
    body: JSON.stringify(body),
  };
}

const nativePaths: Partial<Record<ClientDialectId, string>> = {
  'openai-chat': '/chat/completions',
  'openai-embeddings': '/embeddings',
  'openai-responses': '/responses',
  'openai-completions': '/completions',
};

/**
 * Builds the pass-through request for a body already in OpenAI's own dialect (the gateway core has set the upstream
 * model and, for streams, `stream_options.include_usage`): the same body, this deployment's URL and credentials. The
 * body goes as the client's own text when the core hands it over (`bodyText`: it says exactly what `body` says), so
 * it is not serialised a second time; OpenAI-dialect clients send no protocol headers to forward.
 *
 * @example
 * const upstream = buildOpenAICompatibleNativeRequest('openai-chat', { model: 'gpt-4o-mini', messages }, target);
 * // upstream.url === 'https://api.openai.com/v1/chat/completions'
 */
export function buildOpenAICompatibleNativeRequest(
  dialect: ClientDialectId,
  body: Record<string, unknown>,
  target: UpstreamTarget,
  _clientHeaders?: Readonly<Record<string, string>>,
  bodyText?: string,
): UpstreamRequest {
  const path = nativePaths[dialect];
  if (path === undefined) throw new Error(`openai-compatible cannot pass through ${dialect}`);
  return {
    url: endpoint(target, path),
    method: 'POST',
    headers: openAICompatibleHeaders(target),
    body: bodyText ?? JSON.stringify(body),
  };
}
