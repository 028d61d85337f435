import type { CanonicalContentPart, CanonicalMessage, CanonicalToolCall } from '../../src/canonical/index.ts';
import { invalidRequest } from '../../src/errors.ts';

/** A content block of a Cohere v2 user message: text, or an image by URL (an `https:` or base64 `data:` URL). */
export type CohereUserContentBlock =
  { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } };

/** A tool call in a Cohere v2 assistant message; `arguments` is JSON text, as OpenAI's. */
export interface CohereToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** One message of Cohere's v2 `messages`. */
export type CohereRequestMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | CohereUserContentBlock[] }
  | { role: 'assistant'; content?: string; tool_plan?: string; tool_calls?: CohereToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/**
 * Converts canonical messages to Cohere v2 `messages`.
 *
 * - System messages are joined with a blank line into one system message placed first: Cohere answers a system
 *   turn elsewhere in the list with a 400 ("system turn must be the first in the list").
 * - A user message of one text part is sent as a string, others as content blocks (`text`, `image_url`); image
 *   `detail` is kept (Cohere's vision models take the same values as OpenAI).
 * - An assistant message with tool calls sends its text as `tool_plan` (what Cohere's own answers put beside tool
 *   calls, and what the response reader turns back into text), one without as `content`; an assistant message with
 *   neither text nor tool calls is skipped. Empty tool arguments (tools without parameters) are sent as `{}`.
 * - Tool results are sent as `{role:'tool', tool_call_id, content}` with the content text as the client sent it.
 * - Message `name`s have no Cohere equivalent and are dropped.
 *
 * Throws a 400 naming the part (`messages.[2].content.[0]`) for images in assistant messages and files anywhere
 * (files are also refused by the core, from the translator's features).
 */
export function toCohereMessages(messages: readonly CanonicalMessage[]): CohereRequestMessage[] {
  const system: string[] = [];
  const turns: CohereRequestMessage[] = [];
  messages.forEach((message, messageIndex) => {
    const param = `messages.[${messageIndex}]`;
    switch (message.role) {
      case 'system':
        if (message.content.length > 0) system.push(message.content);
        return;
      case 'user':
        turns.push({ role: 'user', content: toUserContent(message.content, param) });
        return;
      case 'assistant': {
        const text = assistantText(message.content, param);
        if (message.toolCalls.length > 0) {
          turns.push({
            role: 'assistant',
            ...(text.length > 0 ? { tool_plan: text } : {}),
            tool_calls: message.toolCalls.map(toCohereToolCall),
          });
        } else if (text.length > 0) turns.push({ role: 'assistant', content: text });
        return;
      }
      case 'tool':
        turns.push({ role: 'tool', tool_call_id: message.toolCallId, content: message.content });
        return;
    }
  });
  return system.length > 0 ? [{ role: 'system', content: system.join('\n\n') }, ...turns] : turns;
}

function toUserContent(parts: readonly CanonicalContentPart[], param: string): string | CohereUserContentBlock[] {
  const [only] = parts;
  if (parts.length === 1 && only?.type === 'text') return only.text;
  return parts.map((part, partIndex): CohereUserContentBlock => {
    switch (part.type) {
      case 'text':
        return { type: 'text', text: part.text };
      case 'image':
        return {
          type: 'image_url',
          image_url: part.detail === undefined ? { url: part.url } : { url: part.url, detail: part.detail },
        };
      case 'file':
        throw invalidRequest('Cohere models do not accept files.', `${param}.content.[${partIndex}]`);
    }
  });
}

function assistantText(parts: readonly CanonicalContentPart[], param: string): string {
  return parts
    .map((part, partIndex) => {
      if (part.type === 'text') return part.text;
      throw invalidRequest(
        `Cohere does not accept ${part.type}s in assistant messages.`,
        `${param}.content.[${partIndex}]`,
      );
    })
    .join('');
}

function toCohereToolCall(toolCall: CanonicalToolCall): CohereToolCall {
  const argumentsText = toolCall.arguments.trim().length > 0 ? toolCall.arguments : '{}';
  return { id: toolCall.id, type: 'function', function: { name: toolCall.name, arguments: argumentsText } };
}
