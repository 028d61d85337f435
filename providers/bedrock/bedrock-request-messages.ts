import type { CanonicalContentPart, CanonicalMessage, CanonicalToolCall } from '../../src/canonical/index.ts';
import { invalidRequest } from '../../src/errors.ts';
import { toolCallInput } from '../anthropic/anthropic-request-messages.ts';

/** The image formats Converse's `ImageBlock` takes, by media type. */
const imageFormats: Readonly<Record<string, BedrockImageFormat>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** The document formats Converse's `DocumentBlock` takes, by media type. */
const documentFormats: Readonly<Record<string, BedrockDocumentFormat>> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/html': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
};

/** Converse's image formats. */
export type BedrockImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';
/** Converse's document formats. */
export type BedrockDocumentFormat = 'pdf' | 'csv' | 'doc' | 'docx' | 'xls' | 'xlsx' | 'html' | 'txt' | 'md';

/** A content block of a Converse request message: one member set, the block's kind named by its key. */
export type BedrockRequestContentBlock =
  | { text: string }
  | { image: { format: BedrockImageFormat; source: { bytes: string } } }
  | { document: { format: BedrockDocumentFormat; name: string; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: Record<string, unknown> } }
  | { toolResult: { toolUseId: string; content: { text: string }[] } };

/** One Converse message. Roles alternate, starting with `user`. */
export interface BedrockRequestMessage {
  role: 'user' | 'assistant';
  content: BedrockRequestContentBlock[];
}

/** A canonical conversation in Converse's shape. */
export interface BedrockConversation {
  /** `system` blocks, one per system message, in order; undefined when there is none. */
  system: { text: string }[] | undefined;
  messages: BedrockRequestMessage[];
  /**
   * The tool names the history's `toolUse` blocks call, in order of first use: Converse refuses `toolUse` and
   * `toolResult` blocks in a request without `toolConfig`, so a request that declares no tools declares these.
   */
  historyToolNames: string[];
  /** Whether the history holds `toolUse` or `toolResult` blocks. */
  hasToolBlocks: boolean;
}

/**
 * What an empty tool result is sent as: Converse refuses empty text blocks, and a tool that returned nothing did
 * return, which the model must still see (dropping the result would leave its `toolUse` unanswered).
 */
export const emptyToolResultText = '(empty)';

/**
 * Converts canonical messages to Converse's `system` + `messages`.
 *
 * - System messages become `system` text blocks, in order (Converse takes several).
 * - Tool messages become `toolResult` blocks in a user turn; consecutive turns of the same role merge (Converse
 *   requires alternation), so parallel tool results and a following user message are one user turn, results first.
 * - Images must be base64 `data:` URLs (png, jpeg, gif, webp): Converse takes bytes only, so an `https:` image is a 400.
 * - Files become `document` blocks from their bytes (pdf, csv, doc, docx, xls, xlsx, html, txt, md); a file given by URL
 *   or of another type is a 400. Document names are made to fit Converse's alphabet, see {@link toBedrockDocumentName}.
 * - Empty text parts are dropped and messages left empty are skipped (Converse refuses blank text blocks); an empty
 *   tool result is sent as {@link emptyToolResultText}.
 * - Tool call ids are made to fit Converse's `[a-zA-Z0-9_-]{1,64}`, identically on `toolUse` and `toolResult`.
 * - A conversation of only system messages sends them as its one user turn (Converse refuses `messages: []`).
 * - Message `name`s and image `detail` have no Converse equivalent and are dropped.
 *
 * Throws a 400 whose `param` names the field in OpenAI's notation (`messages.[2].content.[0]`).
 */
export function toBedrockConversation(messages: readonly CanonicalMessage[]): BedrockConversation {
  const system: { text: string }[] = [];
  const turns: BedrockRequestMessage[] = [];
  const historyToolNames: string[] = [];
  const documentNames = new Set<string>();
  let hasToolBlocks = false;
  messages.forEach((message, messageIndex) => {
    const param = `messages.[${messageIndex}]`;
    switch (message.role) {
      case 'system':
        if (message.content.length > 0) system.push({ text: message.content });
        return;
      case 'user':
        appendTurn(
          turns,
          'user',
          message.content.map((part, partIndex) => toUserBlock(part, `${param}.content.[${partIndex}]`, documentNames)),
        );
        return;
      case 'assistant':
        for (const toolCall of message.toolCalls) {
          hasToolBlocks = true;
          if (!historyToolNames.includes(toolCall.name)) historyToolNames.push(toolCall.name);
        }
        appendTurn(turns, 'assistant', [
          ...message.content.map((part, partIndex) => toAssistantBlock(part, `${param}.content.[${partIndex}]`)),
          ...message.toolCalls.map((toolCall, callIndex) =>
            toToolUseBlock(toolCall, `${param}.tool_calls.[${callIndex}].function.arguments`),
          ),
        ]);
        return;
      case 'tool':
        hasToolBlocks = true;
        appendTurn(turns, 'user', [
          {
            toolResult: {
              toolUseId: toBedrockToolId(message.toolCallId),
              content: [{ text: message.content.length > 0 ? message.content : emptyToolResultText }],
            },
          },
        ]);
        return;
    }
  });
  for (const turn of turns) if (turn.role === 'user') turn.content = toolResultsFirst(turn.content);
  if (turns.length > 0)
    return { system: system.length > 0 ? system : undefined, messages: turns, historyToolNames, hasToolBlocks };
  if (system.length === 0)
    throw invalidRequest('Every message is empty: Bedrock models need some text to answer.', 'messages');
  return {
    system: undefined,
    messages: [{ role: 'user', content: system.map((block) => ({ text: block.text })) }],
    historyToolNames,
    hasToolBlocks,
  };
}

/**
 * Makes a tool call id acceptable to Converse (`^[a-zA-Z0-9_-]+$`, at most 64 characters), deterministically: other
 * characters become `_`; a longer id keeps its first 55 characters and a hash of the whole, so distinct ids stay
 * distinct.
 */
export function toBedrockToolId(id: string): string {
  const sanitised = id.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (sanitised.length === 0) return '_';
  if (sanitised.length <= 64) return sanitised;
  return `${sanitised.slice(0, 55)}_${fnv1a(id)}`;
}

/**
 * A document name Converse accepts: letters, digits, single spaces, hyphens, parentheses and square brackets, at most
 * 200 characters. The file name's extension is dropped (the format is sent apart), every other character becomes a
 * space, runs of spaces become one; an empty result is `document`. Names must differ within a request, so a repeated
 * one gets ` (2)`, ` (3)` ... Deterministic: the same request gives the same names.
 *
 * @example
 * toBedrockDocumentName('Q3_report.final.pdf', new Set()); // 'Q3 report final'
 */
export function toBedrockDocumentName(filename: string | undefined, taken: Set<string>): string {
  const stem = (filename ?? '').replace(/\.[A-Za-z0-9]{1,5}$/, '');
  const cleaned =
    stem
      .replace(/[^A-Za-z0-9\-()[\]\s]+/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 190)
      .trim() || 'document';
  let name = cleaned;
  for (let copy = 2; taken.has(name); copy++) name = `${cleaned} (${copy})`;
  taken.add(name);
  return name;
}

function appendTurn(
  turns: BedrockRequestMessage[],
  role: 'user' | 'assistant',
  blocks: (BedrockRequestContentBlock | undefined)[],
): void {
  const content = blocks.filter((block): block is BedrockRequestContentBlock => block !== undefined);
  if (content.length === 0) return;
  const last = turns.at(-1);
  if (last !== undefined && last.role === role) last.content.push(...content);
  else turns.push({ role, content });
}

function toolResultsFirst(blocks: BedrockRequestContentBlock[]): BedrockRequestContentBlock[] {
  const isResult = (block: BedrockRequestContentBlock) => 'toolResult' in block;
  const results = blocks.filter(isResult);
  if (results.length === 0 || results.length === blocks.length) return blocks;
  return [...results, ...blocks.filter((block) => !isResult(block))];
}

function toUserBlock(
  part: CanonicalContentPart,
  param: string,
  documentNames: Set<string>,
): BedrockRequestContentBlock | undefined {
  switch (part.type) {
    case 'text':
      return part.text.length > 0 ? { text: part.text } : undefined;
    case 'image':
      return { image: toImage(part.url, param) };
    case 'file': {
      const format = documentFormats[part.mediaType.toLowerCase()];
      if (format === undefined) {
        throw invalidRequest(
          `Bedrock takes documents of type pdf, csv, doc, docx, xls, xlsx, html, txt or md, not ${part.mediaType}.`,
          param,
        );
      }
      if (part.data === undefined) {
        throw invalidRequest('Bedrock takes documents only as inline bytes (base64 file data), not by URL.', param);
      }
      return {
        document: { format, name: toBedrockDocumentName(part.filename, documentNames), source: { bytes: part.data } },
      };
    }
  }
}

function toAssistantBlock(part: CanonicalContentPart, param: string): BedrockRequestContentBlock | undefined {
  if (part.type === 'text') return part.text.length > 0 ? { text: part.text } : undefined;
  throw invalidRequest(`The gateway does not send ${part.type}s in assistant messages to Bedrock.`, param);
}

const dataUrlPattern = /^data:([^;,]+)((?:;[^;,]*)*),(.*)$/s;

function toImage(url: string, param: string): { format: BedrockImageFormat; source: { bytes: string } } {
  if (url.startsWith('https://') || url.startsWith('http://')) {
    throw invalidRequest(
      'Bedrock takes images only as bytes: send the image as a base64 data: URL (data:image/png;base64,...), not a link.',
      param,
    );
  }
  const match = dataUrlPattern.exec(url);
  if (match === null) throw invalidRequest('Image URLs must be base64 data: URLs for Bedrock.', param);
  const [, mediaType = '', parameters = '', data = ''] = match;
  if (!parameters.split(';').includes('base64')) {
    throw invalidRequest('Image data URLs must be base64-encoded (data:<media type>;base64,...).', param);
  }
  const format = imageFormats[mediaType.toLowerCase()];
  if (format === undefined) {
    throw invalidRequest(`Bedrock takes png, jpeg, gif and webp images, not ${mediaType}.`, param);
  }
  return { format, source: { bytes: data } };
}

/** Turns an assistant tool call into a `toolUse` block (the input a JSON object, as Converse wants it). */
function toToolUseBlock(toolCall: CanonicalToolCall, param: string): BedrockRequestContentBlock {
  return {
    toolUse: {
      toolUseId: toBedrockToolId(toolCall.id),
      name: toolCall.name,
      input: toolCallInput(toolCall, param, 'Bedrock'),
    },
  };
}

/** FNV-1a (32 bits) as 8 hex digits: a short, stable fingerprint, not a security hash. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}
