import type {
  CanonicalChatRequest,
  CanonicalContentPart,
  CanonicalMessage,
  CanonicalToolChoice,
} from '../../canonical/canonical-chat-request.ts';
import { invalidRequest } from '../../errors.ts';
import type { OpenAIChatMessage, OpenAIChatRequest } from './openai-chat-request-schema.ts';

type TextContent = string | readonly { text: string }[];

function joinText(content: TextContent): string {
  return typeof content === 'string' ? content : content.map((part) => part.text).join('');
}

function textParts(content: TextContent | null | undefined): CanonicalContentPart[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content.length === 0 ? [] : [{ type: 'text', text: content }];
  return content.map((part) => ({ type: 'text', text: part.text }));
}

function toCanonicalMessage(message: OpenAIChatMessage, index: number): CanonicalMessage {
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: joinText(message.content) };
    case 'user': {
      if (typeof message.content === 'string')
        return { role: 'user', content: textParts(message.content), ...(message.name ? { name: message.name } : {}) };
      const content = message.content.map((part, partIndex): CanonicalContentPart => {
        if (part.type === 'text') return { type: 'text', text: part.text };
        if (part.type === 'image_url')
          return {
            type: 'image',
            url: part.image_url.url,
            ...(part.image_url.detail ? { detail: part.image_url.detail } : {}),
          };
        throw invalidRequest(
          `Content parts of type '${part.type}' can only be sent to OpenAI-compatible upstreams.`,
          `messages.[${index}].content.[${partIndex}].type`,
        );
      });
      return { role: 'user', content, ...(message.name ? { name: message.name } : {}) };
    }
    case 'assistant': {
      const content =
        typeof message.content === 'string' || message.content === null || message.content === undefined
          ? textParts(message.content)
          : message.content.flatMap((part): CanonicalContentPart[] =>
              part.type === 'text' ? [{ type: 'text', text: part.text }] : [],
            );
      const toolCalls = (message.tool_calls ?? []).map((call) => ({
        id: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
      }));
      return { role: 'assistant', content, toolCalls, ...(message.name ? { name: message.name } : {}) };
    }
    case 'tool':
      return { role: 'tool', toolCallId: message.tool_call_id, content: joinText(message.content) };
    case 'function':
      throw invalidRequest(
        "The deprecated 'function' role is only supported by OpenAI-compatible upstreams; use 'tool'.",
        `messages.[${index}].role`,
      );
  }
}

function toCanonicalToolChoice(choice: OpenAIChatRequest['tool_choice']): CanonicalToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (typeof choice === 'string') return { type: choice };
  return { type: 'tool', name: choice.function.name };
}

/** Converts a validated OpenAI chat request into the canonical request translators consume. */
export function openAIChatToCanonical(request: OpenAIChatRequest): CanonicalChatRequest {
  const canonical: CanonicalChatRequest = {
    model: request.model,
    messages: request.messages.map(toCanonicalMessage),
    stream: request.stream === true,
    streamIncludeUsage: request.stream_options?.include_usage === true,
  };
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (maxTokens != null) canonical.maxTokens = maxTokens;
  if (request.temperature != null) canonical.temperature = request.temperature;
  if (request.top_p != null) canonical.topP = request.top_p;
  if (request.stop != null) canonical.stop = typeof request.stop === 'string' ? [request.stop] : request.stop;
  if (request.seed != null) canonical.seed = request.seed;
  if (request.user !== undefined) canonical.user = request.user;
  if (request.n != null) canonical.n = request.n;
  if (request.presence_penalty != null) canonical.presencePenalty = request.presence_penalty;
  if (request.frequency_penalty != null) canonical.frequencyPenalty = request.frequency_penalty;
  if (request.logprobs != null) canonical.logprobs = request.logprobs;
  if (request.top_logprobs != null) canonical.topLogprobs = request.top_logprobs;
  if (request.parallel_tool_calls !== undefined) canonical.parallelToolCalls = request.parallel_tool_calls;
  if (request.reasoning_effort != null) canonical.reasoningEffort = request.reasoning_effort;
  if (request.documents !== undefined) {
    canonical.documents = request.documents.map((document) =>
      typeof document === 'string'
        ? { data: { text: document } }
        : { data: document.data, ...(document.id === undefined ? {} : { id: document.id }) },
    );
  }
  if (request.tools !== undefined) {
    canonical.tools = request.tools.map((tool) => ({
      name: tool.function.name,
      parameters: tool.function.parameters ?? { type: 'object', properties: {} },
      ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
      ...(tool.function.strict != null ? { strict: tool.function.strict } : {}),
    }));
  }
  const toolChoice = toCanonicalToolChoice(request.tool_choice);
  if (toolChoice !== undefined) canonical.toolChoice = toolChoice;
  const format = request.response_format;
  if (format !== undefined) {
    canonical.responseFormat =
      format.type === 'json_schema'
        ? {
            type: 'json_schema',
            name: format.json_schema.name,
            schema: format.json_schema.schema ?? {},
            ...(format.json_schema.strict != null ? { strict: format.json_schema.strict } : {}),
            ...(format.json_schema.description !== undefined ? { description: format.json_schema.description } : {}),
          }
        : { type: format.type };
  }
  return canonical;
}
