import type { CanonicalContentPart, CanonicalMessage, CanonicalToolCall } from '../../src/canonical/index.ts';
import { invalidRequest } from '../../src/errors.ts';
import { parseJson } from '../../src/framing/index.ts';
import { defaultJsonLimits, findJsonLimitViolation, jsonLimitError } from '../../src/framing/json-limits.ts';
import { decodeToolCallId, skipThoughtSignatureValidator } from './gemini-tool-call-id.ts';

/** A part of a Gemini request `Content`: exactly one of its data fields is set, `thoughtSignature` beside it. */
export interface GeminiRequestPart {
  text?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType: string; fileUri: string };
  functionCall?: { id?: string; name: string; args: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
  thoughtSignature?: string;
}

/** One turn of a Gemini request. */
export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiRequestPart[];
}

/** A canonical conversation in Gemini's shape. */
export interface GeminiConversation {
  systemInstruction: { parts: { text: string }[] } | undefined;
  contents: GeminiContent[];
}

/**
 * Converts canonical messages to Gemini's `systemInstruction` and `contents`.
 *
 * - System messages (OpenAI `system` and `developer`), wherever they stand, become the parts of `systemInstruction`,
 *   one text part each, in order. A conversation of nothing but system messages sends their text as the one user
 *   turn instead (Gemini refuses empty `contents`).
 * - User turns are `user`, assistant turns `model`; consecutive turns of one role are merged into one `Content`, so
 *   tool results answering parallel calls (and a user message after them) form one `user` turn, as Gemini expects.
 * - Text parts become `{text}` (empty ones dropped). Images and files: a `data:` URL or base64 `data` becomes
 *   `inlineData {mimeType, data}`; an `https:` or `gs:` URL becomes `fileData {mimeType, fileUri}`, the MIME type
 *   being the part's own or else inferred from the URL's (or file name's) extension. A URL of another scheme, or a
 *   MIME type that cannot be known, is a 400 naming the part.
 * - Assistant tool calls become `functionCall {name, args}` parts: the arguments must be a JSON object (empty text
 *   counts as `{}`); the thought signature encoded in the call's id goes back on that part (see
 *   `gemini-tool-call-id.ts`), and a model turn with calls but no signature at all gets Google's documented
 *   placeholder signature on its first call, so a history from another model is accepted by Gemini 3.
 * - Tool messages become `functionResponse {name, response}` parts. Gemini needs the function's name, which the
 *   canonical tool message lacks: it is taken from the nearest preceding assistant tool call with the same id (a tool
 *   message answering no known call is a 400 naming its `tool_call_id`). A result that is a JSON object is sent as the
 *   response itself; any other text as `{output: text}` (Google's documented key for a function's output).
 * - Message `name`s and image `detail` have no Gemini equivalent and are dropped.
 */
export function toGeminiConversation(messages: readonly CanonicalMessage[]): GeminiConversation {
  const systemTexts: string[] = [];
  const contents: GeminiContent[] = [];
  messages.forEach((message, messageIndex) => {
    const param = `messages.[${messageIndex}]`;
    switch (message.role) {
      case 'system':
        if (message.content.length > 0) systemTexts.push(message.content);
        return;
      case 'user':
        appendTurn(contents, 'user', toContentParts(message.content, param));
        return;
      case 'assistant':
        appendTurn(contents, 'model', [
          ...toContentParts(message.content, param),
          ...toFunctionCallParts(message.toolCalls, param),
        ]);
        return;
      case 'tool':
        appendTurn(contents, 'user', [toFunctionResponsePart(messages, messageIndex, message)]);
        return;
    }
  });
  const systemParts = systemTexts.map((text) => ({ text }));
  if (contents.length > 0) {
    return { systemInstruction: systemParts.length > 0 ? { parts: systemParts } : undefined, contents };
  }
  if (systemParts.length === 0) {
    throw invalidRequest('Every message is empty: Gemini models need some content to answer.', 'messages');
  }
  return { systemInstruction: undefined, contents: [{ role: 'user', parts: systemParts }] };
}

function appendTurn(contents: GeminiContent[], role: 'user' | 'model', parts: GeminiRequestPart[]): void {
  if (parts.length === 0) return;
  const last = contents.at(-1);
  if (last !== undefined && last.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

function toContentParts(content: readonly CanonicalContentPart[], param: string): GeminiRequestPart[] {
  const parts: GeminiRequestPart[] = [];
  content.forEach((part, partIndex) => {
    const partParam = `${param}.content.[${partIndex}]`;
    switch (part.type) {
      case 'text':
        if (part.text.length > 0) parts.push({ text: part.text });
        return;
      case 'image':
        parts.push(toMediaPart(part.url, undefined, undefined, partParam));
        return;
      case 'file':
        if (part.data !== undefined) {
          const mimeType = part.mediaType.length > 0 ? part.mediaType : mimeTypeOfName(part.filename);
          if (mimeType === undefined) throw unknownMimeType(partParam);
          parts.push({ inlineData: { mimeType, data: part.data } });
        } else {
          parts.push(toMediaPart(part.url ?? '', part.mediaType, part.filename, partParam));
        }
        return;
    }
  });
  return parts;
}

const dataUrlPattern = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s;

/** An image or file given by URL: a base64 `data:` URL inline, an `https:`/`gs:` URL as file data. */
function toMediaPart(
  url: string,
  mediaType: string | undefined,
  filename: string | undefined,
  param: string,
): GeminiRequestPart {
  const match = dataUrlPattern.exec(url);
  if (match !== null) {
    const [, urlMediaType = '', parameters = '', data = ''] = match;
    if (!parameters.split(';').includes('base64')) {
      throw invalidRequest('Data URLs must be base64-encoded (data:<media type>;base64,...).', param);
    }
    const mimeType = nonEmpty(mediaType) ?? nonEmpty(urlMediaType.toLowerCase());
    if (mimeType === undefined) throw unknownMimeType(param);
    return { inlineData: { mimeType, data } };
  }
  if (url.startsWith('https://') || url.startsWith('gs://')) {
    const mimeType = nonEmpty(mediaType) ?? mimeTypeOfName(pathOfUrl(url)) ?? mimeTypeOfName(filename);
    if (mimeType === undefined) throw unknownMimeType(param);
    return { fileData: { mimeType, fileUri: url } };
  }
  throw invalidRequest('Gemini takes media as base64 data: URLs, https: URLs or gs: URLs.', param);
}

const nonEmpty = (value: string | undefined): string | undefined =>
  value !== undefined && value.length > 0 ? value : undefined;

function unknownMimeType(param: string) {
  return invalidRequest(
    'Gemini needs the media type of every image and file; this one names none and its extension does not say.',
    param,
  );
}

/** The URL's path without query or fragment, for its extension. */
function pathOfUrl(url: string): string {
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

/** MIME types Gemini accepts as input, by file extension (Gemini API docs: image, audio, video, document understanding). */
const mimeTypeByExtension: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  gif: 'image/gif',
  pdf: 'application/pdf',
  txt: 'text/plain',
  md: 'text/markdown',
  html: 'text/html',
  csv: 'text/csv',
  xml: 'text/xml',
  json: 'application/json',
  wav: 'audio/wav',
  mp3: 'audio/mp3',
  aiff: 'audio/aiff',
  aac: 'audio/aac',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  mp4: 'video/mp4',
  mpeg: 'video/mpeg',
  mov: 'video/mov',
  avi: 'video/avi',
  flv: 'video/x-flv',
  mpg: 'video/mpg',
  webm: 'video/webm',
  wmv: 'video/wmv',
  '3gp': 'video/3gpp',
};

function mimeTypeOfName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const lastSegment = name.slice(name.lastIndexOf('/') + 1);
  const dot = lastSegment.lastIndexOf('.');
  if (dot === -1) return undefined;
  return mimeTypeByExtension[lastSegment.slice(dot + 1).toLowerCase()];
}

function toFunctionCallParts(toolCalls: readonly CanonicalToolCall[], param: string): GeminiRequestPart[] {
  const parts = toolCalls.map((toolCall, callIndex): GeminiRequestPart => {
    const decoded = decodeToolCallId(toolCall.id);
    const args = parseArguments(toolCall, `${param}.tool_calls.[${callIndex}].function.arguments`);
    const part: GeminiRequestPart = {
      functionCall: decoded.generated ? { name: toolCall.name, args } : { id: decoded.id, name: toolCall.name, args },
    };
    if (decoded.thoughtSignature !== undefined) part.thoughtSignature = decoded.thoughtSignature;
    return part;
  });
  const [first] = parts;
  if (first !== undefined && parts.every((part) => part.thoughtSignature === undefined)) {
    first.thoughtSignature = skipThoughtSignatureValidator;
  }
  return parts;
}

/** Tool arguments as the JSON object Gemini's `args` must be; empty text (tools without parameters) counts as `{}`. */
function parseArguments(toolCall: CanonicalToolCall, param: string): Record<string, unknown> {
  if (toolCall.arguments.trim().length === 0) return {};
  const violation = findJsonLimitViolation(toolCall.arguments, defaultJsonLimits);
  if (violation !== undefined) throw jsonLimitError(violation, param);
  const parsed = parseJson(toolCall.arguments);
  if (!parsed.ok) {
    throw invalidRequest(`The arguments of tool call '${toolCall.id}' are not valid JSON: ${parsed.error}`, param);
  }
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidRequest(`The arguments of tool call '${toolCall.id}' must be a JSON object for Gemini.`, param);
  }
  return value as Record<string, unknown>;
}

function toFunctionResponsePart(
  messages: readonly CanonicalMessage[],
  messageIndex: number,
  message: Extract<CanonicalMessage, { role: 'tool' }>,
): GeminiRequestPart {
  const name = functionNameOf(messages, messageIndex, message.toolCallId);
  if (name === undefined) {
    throw invalidRequest(
      `Tool message answers tool call '${message.toolCallId}', which no earlier assistant message made; Gemini needs the function's name.`,
      `messages.[${messageIndex}].tool_call_id`,
    );
  }
  const decoded = decodeToolCallId(message.toolCallId);
  const response = toFunctionResponse(message.content);
  return { functionResponse: decoded.generated ? { name, response } : { id: decoded.id, name, response } };
}

/** The name of the nearest earlier assistant tool call with this id. */
function functionNameOf(messages: readonly CanonicalMessage[], before: number, toolCallId: string): string | undefined {
  for (let index = before - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role !== 'assistant') continue;
    const call = message.toolCalls.find((toolCall) => toolCall.id === toolCallId);
    if (call !== undefined) return call.name;
  }
  return undefined;
}

function toFunctionResponse(content: string): Record<string, unknown> {
  const trimmed = content.trim();
  if (trimmed.startsWith('{') && findJsonLimitViolation(trimmed, defaultJsonLimits) === undefined) {
    const parsed = parseJson(trimmed);
    if (parsed.ok && typeof parsed.value === 'object' && parsed.value !== null && !Array.isArray(parsed.value)) {
      return parsed.value as Record<string, unknown>;
    }
  }
  return { output: content };
}
