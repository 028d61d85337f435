import type {
  CanonicalChatRequest,
  CanonicalContentPart,
  CanonicalMessage,
  CanonicalTool,
  CanonicalToolCall,
  CanonicalToolChoice,
} from '../../canonical/canonical-chat-request.ts';
import { invalidRequest } from '../../errors.ts';
import {
  isAnthropicCustomTool,
  isKnownAnthropicBlock,
  isKnownToolResultContentBlock,
  type AnthropicContentBlock,
  type AnthropicDocumentBlock,
  type AnthropicImageBlock,
  type AnthropicMessage,
  type AnthropicMessagesRequest,
  type AnthropicToolResultBlock,
} from './anthropic-messages-request-schema.ts';

type ReasoningEffort = NonNullable<CanonicalChatRequest['reasoningEffort']>;

/**
 * Converts a validated Anthropic Messages request into the canonical request any provider translator consumes. Only
 * requests for non-Anthropic upstreams take this path: an Anthropic upstream gets the client's own body, so what
 * cannot be carried over here is dropped when harmless and refused with a 400 when dropping it would change the
 * answer.
 *
 * - `system` (a string or text blocks, joined with a blank line) becomes one system message; `cache_control` is
 *   dropped everywhere (other providers cache automatically or not at all).
 * - Images become image parts (base64 as a `data:` URL); PDF documents become file parts titled by `title`; plain-text
 *   and `content` documents become text parts under a `# <title>` line.
 * - Assistant `tool_use` blocks become tool calls; `thinking` and `redacted_thinking` blocks are dropped.
 * - A user turn's `tool_result` blocks become tool messages placed first, in order (OpenAI wants them right after the
 *   assistant's calls); images a tool returned, which a tool message cannot hold, open the user message that follows
 *   under an "Images returned by tool <id>:" line, before the turn's other blocks.
 * - Server tools, Files API (`file_id`) sources and block types only Anthropic can replay (`server_tool_use`,
 *   `web_search_tool_result` ...) are refused with a 400 naming them.
 * - `thinking` becomes `reasoningBudgetTokens` and a `reasoningEffort` by budget; `output_config.effort` sets the
 *   effort of adaptive thinking, `output_config.format` (or the beta's `output_format`) the JSON schema response
 *   format.
 *
 * @example
 * const canonical = anthropicMessagesToCanonical(validateAnthropicMessagesRequest(body));
 */
export function anthropicMessagesToCanonical(request: AnthropicMessagesRequest): CanonicalChatRequest {
  const messages: CanonicalMessage[] = [];
  const system = systemText(request.system);
  if (system !== undefined) messages.push({ role: 'system', content: system });
  request.messages.forEach((message, index) => messages.push(...toCanonicalMessages(message, index)));

  const canonical: CanonicalChatRequest = {
    model: request.model,
    messages,
    stream: request.stream === true,
    // Anthropic streams always report usage (message_start and message_delta).
    streamIncludeUsage: true,
    maxTokens: request.max_tokens,
  };
  if (request.temperature != null) canonical.temperature = request.temperature;
  if (request.top_p != null) canonical.topP = request.top_p;
  if (request.top_k != null) canonical.topK = request.top_k;
  if (request.stop_sequences != null && request.stop_sequences.length > 0) canonical.stop = request.stop_sequences;
  if (request.metadata?.user_id != null) canonical.user = request.metadata.user_id;
  if (request.tools != null && request.tools.length > 0) canonical.tools = request.tools.map(toCanonicalTool);
  if (request.tool_choice != null) {
    canonical.toolChoice = toCanonicalToolChoice(request.tool_choice);
    if (request.tool_choice.disable_parallel_tool_use === true) canonical.parallelToolCalls = false;
  }
  Object.assign(canonical, toReasoning(request));
  const format = request.output_config?.format ?? request.output_format;
  if (format != null) canonical.responseFormat = { type: 'json_schema', name: 'response', schema: format.schema };
  return canonical;
}

function systemText(system: AnthropicMessagesRequest['system']): string | undefined {
  if (system == null) return undefined;
  const text = typeof system === 'string' ? system : system.map((block) => block.text).join('\n\n');
  return text.length > 0 ? text : undefined;
}

function toCanonicalMessages(message: AnthropicMessage, index: number): CanonicalMessage[] {
  if (typeof message.content === 'string') {
    const content: CanonicalContentPart[] = message.content.length > 0 ? [{ type: 'text', text: message.content }] : [];
    return [message.role === 'user' ? { role: 'user', content } : { role: 'assistant', content, toolCalls: [] }];
  }
  const param = `messages.[${index}].content`;
  return message.role === 'user' ? userMessages(message.content, param) : [assistantMessage(message.content, param)];
}

/** The canonical messages of one user turn: its tool results first, then a user message with everything else. */
function userMessages(blocks: readonly AnthropicContentBlock[], param: string): CanonicalMessage[] {
  const toolMessages: CanonicalMessage[] = [];
  const toolAttachments: CanonicalContentPart[] = [];
  const content: CanonicalContentPart[] = [];
  blocks.forEach((block, blockIndex) => {
    const blockParam = `${param}.[${blockIndex}]`;
    if (!isKnownAnthropicBlock(block)) throw unreplayableBlock(block.type, blockParam);
    switch (block.type) {
      case 'text':
        content.push({ type: 'text', text: block.text });
        return;
      case 'image':
        content.push(imagePart(block, blockParam));
        return;
      case 'document':
        content.push(...documentParts(block, blockParam));
        return;
      case 'tool_result': {
        const result = toolResult(block, blockParam);
        toolMessages.push(result.message);
        toolAttachments.push(...result.attachments);
        return;
      }
      default:
        throw invalidRequest(`'${block.type}' blocks belong in assistant messages.`, `${blockParam}.type`);
    }
  });
  const userContent = [...toolAttachments, ...content];
  if (userContent.length === 0 && toolMessages.length > 0) return toolMessages;
  return [...toolMessages, { role: 'user', content: userContent }];
}

function assistantMessage(blocks: readonly AnthropicContentBlock[], param: string): CanonicalMessage {
  const content: CanonicalContentPart[] = [];
  const toolCalls: CanonicalToolCall[] = [];
  blocks.forEach((block, blockIndex) => {
    const blockParam = `${param}.[${blockIndex}]`;
    if (!isKnownAnthropicBlock(block)) throw unreplayableBlock(block.type, blockParam);
    switch (block.type) {
      case 'text':
        content.push({ type: 'text', text: block.text });
        return;
      case 'tool_use':
        toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) });
        return;
      case 'thinking':
      case 'redacted_thinking':
        // Only Anthropic can verify a thinking signature, and Anthropic upstreams get the client's body unchanged.
        return;
      default:
        throw invalidRequest(`'${block.type}' blocks belong in user messages.`, `${blockParam}.type`);
    }
  });
  return { role: 'assistant', content, toolCalls };
}

/** A tool message for one `tool_result`, and the images (or files) it returned, each group under a heading line. */
function toolResult(
  block: AnthropicToolResultBlock,
  param: string,
): { message: CanonicalMessage; attachments: CanonicalContentPart[] } {
  const texts: string[] = [];
  const attachments: CanonicalContentPart[] = [];
  if (typeof block.content === 'string') texts.push(block.content);
  else {
    block.content?.forEach((part, partIndex) => {
      const partParam = `${param}.content.[${partIndex}]`;
      if (!isKnownToolResultContentBlock(part)) throw unreplayableBlock(part.type, partParam);
      if (part.type === 'text') texts.push(part.text);
      else if (part.type === 'image') attachments.push(imagePart(part, partParam));
      else attachments.push(...documentParts(part, partParam));
    });
  }
  const text = texts.join('\n');
  const content = block.is_error === true && text.length > 0 ? `Error: ${text}` : text;
  const message: CanonicalMessage = { role: 'tool', toolCallId: block.tool_use_id, content };
  if (attachments.length === 0) return { message, attachments };
  const noun = attachments.every((part) => part.type === 'image') ? 'Images' : 'Files';
  const heading: CanonicalContentPart = { type: 'text', text: `${noun} returned by tool ${block.tool_use_id}:` };
  return { message, attachments: [heading, ...attachments] };
}

function imagePart(block: AnthropicImageBlock, param: string): CanonicalContentPart {
  const source = block.source;
  switch (source.type) {
    case 'base64':
      return { type: 'image', url: `data:${source.media_type};base64,${source.data}` };
    case 'url':
      return { type: 'image', url: source.url };
    case 'file':
      throw filesApiSource(`${param}.source`);
  }
}

function documentParts(block: AnthropicDocumentBlock, param: string): CanonicalContentPart[] {
  const source = block.source;
  const title = block.title != null && block.title.length > 0 ? block.title : undefined;
  const filename = title !== undefined ? { filename: title } : {};
  switch (source.type) {
    case 'base64':
      return [{ type: 'file', mediaType: source.media_type, data: source.data, ...filename }];
    case 'url':
      // Anthropic's URL documents are PDFs (URLPDFSource).
      return [{ type: 'file', mediaType: 'application/pdf', url: source.url, ...filename }];
    case 'text':
      return [{ type: 'text', text: title !== undefined ? `# ${title}\n\n${source.data}` : source.data }];
    case 'content': {
      const heading: CanonicalContentPart[] = title !== undefined ? [{ type: 'text', text: `# ${title}` }] : [];
      if (typeof source.content === 'string') return [...heading, { type: 'text', text: source.content }];
      const parts = source.content.map((part, partIndex): CanonicalContentPart =>
        part.type === 'text'
          ? { type: 'text', text: part.text }
          : imagePart(part, `${param}.source.content.[${partIndex}]`),
      );
      return [...heading, ...parts];
    }
    case 'file':
      throw filesApiSource(`${param}.source`);
  }
}

function toCanonicalTool(tool: NonNullable<AnthropicMessagesRequest['tools']>[number], index: number): CanonicalTool {
  if (!isAnthropicCustomTool(tool)) {
    const name = tool.name !== undefined ? `The tool '${tool.name}' (${tool.type})` : `The tool of type '${tool.type}'`;
    throw invalidRequest(
      `${name} is an Anthropic server tool; this model's provider cannot run it.`,
      `tools.[${index}]`,
    );
  }
  const canonical: CanonicalTool = { name: tool.name, parameters: tool.input_schema };
  if (tool.description != null) canonical.description = tool.description;
  if (tool.strict != null) canonical.strict = tool.strict;
  return canonical;
}

function toCanonicalToolChoice(choice: NonNullable<AnthropicMessagesRequest['tool_choice']>): CanonicalToolChoice {
  switch (choice.type) {
    case 'auto':
      return { type: 'auto' };
    case 'any':
      return { type: 'required' };
    case 'none':
      return { type: 'none' };
    case 'tool':
      return { type: 'tool', name: choice.name };
  }
}

const effortByOutputConfig: Record<
  NonNullable<NonNullable<AnthropicMessagesRequest['output_config']>['effort']>,
  ReasoningEffort
> = { low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'xhigh' };

/**
 * The reasoning fields: an explicit budget keeps the budget and maps it to an effort (under 4096 tokens `low`, under
 * 16384 `medium`, else `high`); adaptive thinking (and `between_tools`) takes `output_config.effort`, else `medium`;
 * without `thinking`, `output_config.effort` alone sets the effort; disabled thinking sets nothing.
 */
function toReasoning(
  request: AnthropicMessagesRequest,
): Pick<CanonicalChatRequest, 'reasoningEffort' | 'reasoningBudgetTokens'> {
  const thinking = request.thinking;
  const configured = request.output_config?.effort;
  const effort = configured != null ? effortByOutputConfig[configured] : undefined;
  if (thinking == null) return effort !== undefined ? { reasoningEffort: effort } : {};
  switch (thinking.type) {
    case 'enabled': {
      const budget = thinking.budget_tokens;
      return {
        reasoningBudgetTokens: budget,
        reasoningEffort: budget < 4096 ? 'low' : budget < 16384 ? 'medium' : 'high',
      };
    }
    case 'adaptive':
    case 'between_tools':
      return { reasoningEffort: effort ?? 'medium' };
    case 'disabled':
      return {};
  }
}

function unreplayableBlock(type: string, param: string) {
  return invalidRequest(
    `Content blocks of type '${type}' can only be replayed to Anthropic models; this model's provider cannot take them.`,
    `${param}.type`,
  );
}

function filesApiSource(param: string) {
  return invalidRequest(
    "Files API sources (file_id) can only be read by Anthropic models; send the file's bytes (base64) or a URL instead.",
    param,
  );
}
