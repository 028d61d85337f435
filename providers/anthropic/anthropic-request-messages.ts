import type {
  CanonicalChatRequest,
  CanonicalContentPart,
  CanonicalMessage,
  CanonicalToolCall,
} from '../../src/canonical/index.ts';
import { invalidRequest } from '../../src/errors.ts';
import { parseJson } from '../../src/framing/index.ts';
import { defaultJsonLimits, findJsonLimitViolation, jsonLimitError } from '../../src/framing/json-limits.ts';

/** An image source: inline base64 bytes or a URL Anthropic fetches itself. */
export type AnthropicImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

/** A content block of an Anthropic request message. */
export type AnthropicRequestContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; source: AnthropicImageSource }
  | {
      type: 'document';
      source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
      title?: string;
    }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content?: string };

/** One Anthropic request message. Roles strictly alternate, starting with `user`. */
export interface AnthropicRequestMessage {
  role: 'user' | 'assistant';
  content: AnthropicRequestContentBlock[];
}

/** A canonical conversation in Anthropic's shape: one system prompt beside the alternating turns. */
export interface AnthropicConversation {
  system: string | undefined;
  messages: AnthropicRequestMessage[];
}

/**
 * Converts canonical messages to Anthropic's `system` + `messages`.
 *
 * - System messages, wherever they stand, are joined with a blank line into the one `system` prompt.
 * - Tool messages become `tool_result` blocks in a user turn; consecutive turns of the same role are merged (tool
 *   results and a following user message become one user turn), because Anthropic requires alternation. In a
 *   merged user turn the tool results are moved first, as Anthropic requires.
 * - Empty text parts are dropped and messages left without content are skipped: Anthropic rejects empty text blocks.
 * - A conversation left without turns (only system messages, or nothing but empty text besides them) sends the
 *   system prompt as its one user turn, with no `system`: OpenAI answers a system-only conversation, Anthropic
 *   refuses `messages: []`, and a model asked by the user does what a system prompt alone would have it do. With
 *   no text anywhere it is a 400 naming `messages`.
 * - Message `name`s and image `detail` have no Anthropic equivalent and are dropped.
 * - Tool call ids are sanitised to Anthropic's `[a-zA-Z0-9_-]` alphabet, identically on `tool_use` and
 *   `tool_result`, so histories produced by other providers still pair up.
 *
 * Throws a 400 {@link invalidRequest} whose `param` names the offending field in OpenAI's notation
 * (`messages.[2].content.[0]`) for what Anthropic cannot express: images in assistant
 * messages, images that are neither `https:`/`http:` nor base64 `data:` URLs, tool arguments that are not a JSON
 * object (or nested beyond the default JSON limits: they are JSON inside a string, which the body check cannot
 * see, and are re-serialised into the Anthropic body).
 */
export function toAnthropicConversation(messages: readonly CanonicalMessage[]): AnthropicConversation {
  const systemParts: string[] = [];
  const turns: AnthropicRequestMessage[] = [];
  messages.forEach((message, messageIndex) => {
    const param = `messages.[${messageIndex}]`;
    switch (message.role) {
      case 'system':
        if (message.content.length > 0) systemParts.push(message.content);
        return;
      case 'user':
        appendTurn(
          turns,
          'user',
          message.content.map((part, partIndex) => toUserBlock(part, `${param}.content.[${partIndex}]`)),
        );
        return;
      case 'assistant':
        appendTurn(turns, 'assistant', [
          ...message.content.map((part, partIndex) => toAssistantBlock(part, `${param}.content.[${partIndex}]`)),
          ...message.toolCalls.map((toolCall, callIndex) =>
            toToolUseBlock(toolCall, `${param}.tool_calls.[${callIndex}].function.arguments`),
          ),
        ]);
        return;
      case 'tool':
        appendTurn(turns, 'user', [
          message.content.length > 0
            ? { type: 'tool_result', tool_use_id: toAnthropicToolId(message.toolCallId), content: message.content }
            : { type: 'tool_result', tool_use_id: toAnthropicToolId(message.toolCallId) },
        ]);
        return;
    }
  });
  for (const turn of turns) if (turn.role === 'user') turn.content = toolResultsFirst(turn.content);
  const system = systemParts.length > 0 ? systemParts.join('\n\n') : undefined;
  if (turns.length > 0) return { system, messages: turns };
  if (system === undefined)
    throw invalidRequest('Every message is empty: Anthropic models need some text to answer.', 'messages');
  return { system: undefined, messages: [{ role: 'user', content: [{ type: 'text', text: system }] }] };
}

/** Makes a tool call id acceptable to Anthropic (`^[a-zA-Z0-9_-]+$`), deterministically. */
export function toAnthropicToolId(id: string): string {
  const sanitised = id.replace(/[^a-zA-Z0-9_-]/g, '_');
  return sanitised.length > 0 ? sanitised : '_';
}

function appendTurn(
  turns: AnthropicRequestMessage[],
  role: 'user' | 'assistant',
  blocks: (AnthropicRequestContentBlock | undefined)[],
): void {
  const content = blocks.filter((block): block is AnthropicRequestContentBlock => block !== undefined);
  if (content.length === 0) return;
  const last = turns.at(-1);
  if (last !== undefined && last.role === role) last.content.push(...content);
  else turns.push({ role, content });
}

function toolResultsFirst(blocks: AnthropicRequestContentBlock[]): AnthropicRequestContentBlock[] {
  const results = blocks.filter((block) => block.type === 'tool_result');
  if (results.length === 0 || results.length === blocks.length) return blocks;
  return [...results, ...blocks.filter((block) => block.type !== 'tool_result')];
}

function toUserBlock(part: CanonicalContentPart, param: string): AnthropicRequestContentBlock | undefined {
  if (part.type === 'text') return part.text.length > 0 ? { type: 'text', text: part.text } : undefined;
  if (part.type === 'file') {
    const source =
      part.data !== undefined
        ? { type: 'base64' as const, media_type: part.mediaType, data: part.data }
        : { type: 'url' as const, url: part.url ?? '' };
    return { type: 'document', source, ...(part.filename === undefined ? {} : { title: part.filename }) };
  }
  return { type: 'image', source: toImageSource(part.url, param) };
}

function toAssistantBlock(part: CanonicalContentPart, param: string): AnthropicRequestContentBlock | undefined {
  if (part.type === 'text') return part.text.length > 0 ? { type: 'text', text: part.text } : undefined;
  throw invalidRequest(`Anthropic does not accept ${part.type}s in assistant messages.`, param);
}

const dataUrlPattern = /^data:([^;,]+)((?:;[^;,]*)*),(.*)$/s;

/** Reads an image URL: `data:<media type>;base64,<bytes>` inline, `https:` (or `http:`) for Anthropic to fetch. */
function toImageSource(url: string, param: string): AnthropicImageSource {
  if (url.startsWith('https://') || url.startsWith('http://')) return { type: 'url', url };
  const match = dataUrlPattern.exec(url);
  if (match !== null) {
    const [, mediaType = '', parameters = '', data = ''] = match;
    if (!parameters.split(';').includes('base64')) {
      throw invalidRequest('Image data URLs must be base64-encoded (data:<media type>;base64,...).', param);
    }
    return { type: 'base64', media_type: mediaType.toLowerCase(), data };
  }
  throw invalidRequest('Image URLs must be https: URLs or base64 data: URLs.', param);
}

/** Turns an assistant tool call into a `tool_use` block. */
function toToolUseBlock(toolCall: CanonicalToolCall, param: string): AnthropicRequestContentBlock {
  return {
    type: 'tool_use',
    id: toAnthropicToolId(toolCall.id),
    name: toolCall.name,
    input: toolCallInput(toolCall, param, 'Anthropic'),
  };
}

/**
 * A tool call's arguments as the JSON object Anthropic's `tool_use` and Bedrock's `toolUse` want: empty arguments
 * (which some clients send for tools without parameters) count as `{}`; anything else must be a JSON object within
 * the JSON limits, or the request is a 400 naming `param`.
 */
export function toolCallInput(toolCall: CanonicalToolCall, param: string, upstream: string): Record<string, unknown> {
  if (toolCall.arguments.trim().length === 0) return {};
  const violation = findJsonLimitViolation(toolCall.arguments, defaultJsonLimits);
  if (violation !== undefined) throw jsonLimitError(violation, param);
  const parsed = parseJson(toolCall.arguments);
  if (!parsed.ok)
    throw invalidRequest(`The arguments of tool call '${toolCall.id}' are not valid JSON: ${parsed.error}`, param);
  const input = parsed.value;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalidRequest(`The arguments of tool call '${toolCall.id}' must be a JSON object for ${upstream}.`, param);
  }
  return input as Record<string, unknown>;
}

/**
 * Refuses images and files given by URL, for a cloud host of Claude that takes base64 sources only (Vertex AI,
 * Bedrock): the client hears it from the gateway, naming the part, not an upstream error.
 */
export function rejectUrlSources(request: CanonicalChatRequest, host: string): void {
  request.messages.forEach((message, messageIndex) => {
    if (message.role !== 'user' && message.role !== 'assistant') return;
    message.content.forEach((part, partIndex) => {
      const byUrl =
        (part.type === 'image' && !part.url.startsWith('data:')) ||
        (part.type === 'file' && part.data === undefined && part.url !== undefined);
      if (byUrl) {
        throw invalidRequest(
          `Claude on ${host} does not accept images or files by URL; send them inline as base64 data: URLs.`,
          `messages.[${messageIndex}].content.[${partIndex}]`,
        );
      }
    });
  });
}
