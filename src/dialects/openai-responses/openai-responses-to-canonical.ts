import type {
  CanonicalChatRequest,
  CanonicalContentPart,
  CanonicalMessage,
  CanonicalTool,
  CanonicalToolChoice,
} from '../../canonical/canonical-chat-request.ts';
import { invalidRequest } from '../../errors.ts';
import {
  isKnownResponsesItem,
  isKnownResponsesMessagePart,
  isKnownResponsesOutputPart,
  isResponsesFunctionTool,
  openAIResponsesInputItemSchema,
  responsesItemType,
  type OpenAIResponsesInputItem,
  type OpenAIResponsesKnownOutputPart,
  type OpenAIResponsesMessageItem,
  type OpenAIResponsesMessagePart,
  type OpenAIResponsesOutputPart,
  type OpenAIResponsesRequest,
  type OpenAIResponsesTool,
} from './openai-responses-request-schema.ts';

type ReasoningEffort = NonNullable<CanonicalChatRequest['reasoningEffort']>;
type RequestEffort = NonNullable<NonNullable<OpenAIResponsesRequest['reasoning']>['effort']>;

/** Where an item came from: the request's `input.[i]`, or the stored chain named by `previous_response_id`. */
interface ItemSource {
  item: OpenAIResponsesInputItem;
  /** The param a 400 about the item names. */
  param: string;
  fromHistory: boolean;
}

/**
 * Converts a validated Responses request into the canonical request any provider translator consumes. Only requests
 * for deployments that are not native Responses upstreams take this path: what cannot be carried over is dropped when
 * harmless and refused with a 400 when dropping it would change the answer.
 *
 * `history` is the earlier conversation: the stored input and output items of the `previous_response_id` chain,
 * oldest first, placed before the request's own items (a problem in it names `previous_response_id`). Instructions
 * are not items, so only the current request's `instructions` apply, as OpenAI documents.
 *
 * - `instructions` become the first system message; `system` and `developer` messages become system messages.
 * - User content: `input_text` becomes text, `input_image` an image (a `file_id` alone is refused: the gateway has no
 *   Files API), `input_file` a file part from `file_data` (a `data:` URL or bare base64, PDF unless the URL says
 *   otherwise) or `file_url`.
 * - Assistant messages become assistant text (output text and refusals joined); consecutive `function_call` items
 *   become the tool calls of one assistant message, joined to the assistant message right before them.
 * - `function_call_output` items become tool messages (text parts joined by newlines); images and files a tool
 *   returned, which a tool message cannot hold, open the next user message (a new one when none follows) under an
 *   "Images returned by tool <call_id>:" line.
 * - `reasoning` items are dropped (only OpenAI can read them back); item references and built-in tool items (web
 *   search calls, computer calls ...) are refused, as are built-in tools and tool choices other than a function.
 *
 * @example
 * const canonical = openAIResponsesToCanonical(validateOpenAIResponsesRequest(body), storedItems);
 */
export function openAIResponsesToCanonical(
  request: OpenAIResponsesRequest,
  history: readonly Record<string, unknown>[] = [],
): CanonicalChatRequest {
  const sources: ItemSource[] = [
    ...history.map((stored): ItemSource => ({
      item: historyItem(stored),
      param: 'previous_response_id',
      fromHistory: true,
    })),
    ...requestItems(request).map((item, index): ItemSource => ({
      item,
      param: `input.[${index}]`,
      fromHistory: false,
    })),
  ];
  const conversation = new Conversation();
  if (request.instructions != null && request.instructions.length > 0) {
    conversation.messages.push({ role: 'system', content: request.instructions });
  }
  for (const source of sources) conversation.add(source);
  const messages = conversation.finish();
  if (!messages.some((message) => message.role !== 'system')) {
    throw invalidRequest("The request has no input to answer: send 'input' (or a 'previous_response_id').", 'input');
  }

  const canonical: CanonicalChatRequest = {
    model: request.model,
    messages,
    stream: request.stream === true,
    // Responses streams always report usage (`response.completed`).
    streamIncludeUsage: true,
  };
  if (request.max_output_tokens != null) canonical.maxTokens = request.max_output_tokens;
  if (request.temperature != null) canonical.temperature = request.temperature;
  if (request.top_p != null) canonical.topP = request.top_p;
  const user = request.safety_identifier ?? request.user;
  if (user != null) canonical.user = user;
  if (request.tools != null && request.tools.length > 0) canonical.tools = request.tools.map(toCanonicalTool);
  if (request.tool_choice != null) canonical.toolChoice = toCanonicalToolChoice(request.tool_choice);
  if (request.parallel_tool_calls != null) canonical.parallelToolCalls = request.parallel_tool_calls;
  const effort = request.reasoning?.effort;
  if (effort != null) canonical.reasoningEffort = reasoningEffort[effort];
  const format = request.text?.format;
  if (format != null) {
    canonical.responseFormat =
      format.type === 'json_schema'
        ? {
            type: 'json_schema',
            name: format.name,
            schema: format.schema,
            ...(format.strict != null ? { strict: format.strict } : {}),
            ...(format.description != null ? { description: format.description } : {}),
          }
        : { type: format.type };
  }
  return canonical;
}

const reasoningEffort: Record<RequestEffort, ReasoningEffort> = {
  none: 'none',
  minimal: 'minimal',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'xhigh',
  max: 'xhigh',
};

function requestItems(request: OpenAIResponsesRequest): OpenAIResponsesInputItem[] {
  if (request.input === undefined) return [];
  if (typeof request.input === 'string') return [{ role: 'user', content: request.input }];
  return request.input;
}

/** A stored item of the `previous_response_id` chain, read with the input item schema. */
function historyItem(stored: Record<string, unknown>): OpenAIResponsesInputItem {
  const parsed = openAIResponsesInputItemSchema.safeParse(stored);
  if (parsed.success) return parsed.data;
  const type = typeof stored.type === 'string' ? ` (type '${stored.type}')` : '';
  throw invalidRequest(`The previous response has an item the gateway cannot read${type}.`, 'previous_response_id');
}

/** Builds the canonical messages item by item, keeping what a tool returned besides text for the next user turn. */
class Conversation {
  readonly messages: CanonicalMessage[] = [];
  /** Images and files tool outputs returned since the last user message, each group under its heading. */
  private toolAttachments: CanonicalContentPart[] = [];

  add({ item, param, fromHistory }: ItemSource): void {
    const type = responsesItemType(item);
    if (type !== 'function_call_output' && type !== 'message' && type !== 'reasoning') this.flushAttachments();
    if (!isKnownResponsesItem(item) || item.type === 'item_reference') throw unreplayableItem(type, param, fromHistory);
    switch (item.type) {
      case undefined:
      case 'message':
        this.addMessage(item, param);
        return;
      case 'function_call': {
        const call = { id: item.call_id, name: item.name, arguments: item.arguments };
        const last = this.messages.at(-1);
        if (last?.role === 'assistant') last.toolCalls.push(call);
        else this.messages.push({ role: 'assistant', content: [], toolCalls: [call] });
        return;
      }
      case 'function_call_output': {
        const result = toolOutput(item.output, `${param}.output`);
        this.messages.push({ role: 'tool', toolCallId: item.call_id, content: result.text });
        if (result.attachments.length > 0) {
          const noun = result.attachments.every((part) => part.type === 'image') ? 'Images' : 'Files';
          this.toolAttachments.push({ type: 'text', text: `${noun} returned by tool ${item.call_id}:` });
          this.toolAttachments.push(...result.attachments);
        }
        return;
      }
      case 'reasoning':
        // Reasoning items (summaries, encrypted content) can only be read back by OpenAI.
        return;
    }
  }

  finish(): CanonicalMessage[] {
    this.flushAttachments();
    return this.messages;
  }

  private addMessage(item: OpenAIResponsesMessageItem, param: string): void {
    const content = item.content;
    const partParam = (index: number) => `${param}.content.[${index}]`;
    switch (item.role) {
      case 'system':
      case 'developer':
        this.flushAttachments();
        this.messages.push({
          role: 'system',
          content: typeof content === 'string' ? content : systemText(content, partParam),
        });
        return;
      case 'user': {
        const parts =
          typeof content === 'string'
            ? textParts(content)
            : content.map((part, index) => userPart(part, partParam(index)));
        this.messages.push({ role: 'user', content: [...this.toolAttachments, ...parts] });
        this.toolAttachments = [];
        return;
      }
      case 'assistant': {
        this.flushAttachments();
        const text = typeof content === 'string' ? content : assistantText(content, partParam);
        this.messages.push({ role: 'assistant', content: textParts(text), toolCalls: [] });
        return;
      }
    }
  }

  /** Tool attachments not followed by a user message become one of their own. */
  private flushAttachments(): void {
    if (this.toolAttachments.length === 0) return;
    this.messages.push({ role: 'user', content: this.toolAttachments });
    this.toolAttachments = [];
  }
}

function textParts(text: string): CanonicalContentPart[] {
  return text.length > 0 ? [{ type: 'text', text }] : [];
}

function systemText(parts: readonly OpenAIResponsesMessagePart[], partParam: (index: number) => string): string {
  return parts
    .map((part, index) => {
      if (!isKnownResponsesMessagePart(part)) throw unreplayablePart(part.type, partParam(index));
      if (part.type === 'input_text' || part.type === 'output_text') return part.text;
      throw invalidRequest(
        `System and developer messages take text only, not '${part.type}' parts.`,
        `${partParam(index)}.type`,
      );
    })
    .join('\n');
}

function assistantText(parts: readonly OpenAIResponsesMessagePart[], partParam: (index: number) => string): string {
  return parts
    .map((part, index) => {
      if (!isKnownResponsesMessagePart(part)) throw unreplayablePart(part.type, partParam(index));
      if (part.type === 'output_text' || part.type === 'input_text') return part.text;
      if (part.type === 'refusal') return part.refusal;
      throw invalidRequest(
        `Assistant messages take text and refusals only, not '${part.type}' parts.`,
        `${partParam(index)}.type`,
      );
    })
    .join('');
}

function userPart(part: OpenAIResponsesMessagePart, param: string): CanonicalContentPart {
  if (!isKnownResponsesMessagePart(part)) throw unreplayablePart(part.type, param);
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: part.text };
    case 'refusal':
      return { type: 'text', text: part.refusal };
    case 'input_image':
    case 'input_file':
      return attachmentPart(part, param);
  }
}

type AttachmentPart = Extract<OpenAIResponsesKnownOutputPart, { type: 'input_image' | 'input_file' }>;

function attachmentPart(part: AttachmentPart, param: string): CanonicalContentPart {
  if (part.type === 'input_image') {
    if (part.image_url != null && part.image_url.length > 0) {
      // `original` (no downscaling) is closest to `high` where a provider has detail levels at all.
      const detail = part.detail === 'original' ? 'high' : part.detail;
      return { type: 'image', url: part.image_url, ...(detail != null ? { detail } : {}) };
    }
    if (part.file_id != null) throw filesApiReference(`${param}.file_id`);
    throw invalidRequest("An 'input_image' part needs an 'image_url'.", `${param}.image_url`);
  }
  const filename = part.filename != null && part.filename.length > 0 ? { filename: part.filename } : {};
  if (part.file_data != null && part.file_data.length > 0) {
    return { type: 'file', ...fileData(part.file_data, `${param}.file_data`), ...filename };
  }
  if (part.file_url != null && part.file_url.length > 0) {
    return { type: 'file', mediaType: 'application/pdf', url: part.file_url, ...filename };
  }
  if (part.file_id != null) throw filesApiReference(`${param}.file_id`);
  throw invalidRequest("An 'input_file' part needs 'file_data' or 'file_url'.", param);
}

const dataUrlPattern = /^data:([^;,]*)((?:;[^;,]*)*),/;

/** A file's media type and base64 bytes from `file_data`: a `data:` URL, or bare base64 (a PDF). */
function fileData(value: string, param: string): { mediaType: string; data: string } {
  const match = dataUrlPattern.exec(value);
  if (match === null) return { mediaType: 'application/pdf', data: value };
  const parameters = (match[2] ?? '').split(';');
  if (!parameters.includes('base64')) throw invalidRequest("'file_data' must carry base64 bytes (';base64,').", param);
  const mediaType = match[1] !== undefined && match[1].length > 0 ? match[1] : 'application/pdf';
  return { mediaType, data: value.slice(match[0].length) };
}

/** A tool message's text and the images and files the tool returned beside it. */
function toolOutput(
  output: string | readonly OpenAIResponsesOutputPart[],
  param: string,
): { text: string; attachments: CanonicalContentPart[] } {
  if (typeof output === 'string') return { text: output, attachments: [] };
  const texts: string[] = [];
  const attachments: CanonicalContentPart[] = [];
  output.forEach((part, index) => {
    const partParam = `${param}.[${index}]`;
    if (!isKnownResponsesOutputPart(part)) throw unreplayablePart(part.type, partParam);
    if (part.type === 'input_text') texts.push(part.text);
    else attachments.push(attachmentPart(part, partParam));
  });
  return { text: texts.join('\n'), attachments };
}

function toCanonicalTool(tool: OpenAIResponsesTool, index: number): CanonicalTool {
  if (!isResponsesFunctionTool(tool)) {
    throw invalidRequest(
      `The built-in tool '${tool.type}' runs only on upstreams that have it natively; this model's deployment does not.`,
      `tools.[${index}]`,
    );
  }
  const canonical: CanonicalTool = {
    name: tool.name,
    parameters: tool.parameters ?? { type: 'object', properties: {} },
  };
  if (tool.description != null) canonical.description = tool.description;
  if (tool.strict != null) canonical.strict = tool.strict;
  return canonical;
}

function toCanonicalToolChoice(choice: NonNullable<OpenAIResponsesRequest['tool_choice']>): CanonicalToolChoice {
  if (typeof choice === 'string') return { type: choice };
  if (choice.type === 'function' && typeof choice.name === 'string') return { type: 'tool', name: choice.name };
  throw invalidRequest(
    `The tool choice '${choice.type}' works only on upstreams that have it natively; this model's deployment does not.`,
    'tool_choice',
  );
}

function unreplayableItem(type: string, param: string, fromHistory: boolean) {
  if (fromHistory) {
    return invalidRequest(
      `The previous response has a '${type}' item, which only a native Responses upstream can take back; this model's deployment is not one.`,
      param,
    );
  }
  if (type === 'item_reference') {
    return invalidRequest("Item references need the gateway's stored responses; send the item itself.", param);
  }
  return invalidRequest(
    `Input items of type '${type}' come from built-in tools that only native Responses upstreams have; this model's deployment is not one.`,
    `${param}.type`,
  );
}

function unreplayablePart(type: string, param: string) {
  return invalidRequest(
    `Content parts of type '${type}' can only be sent to native Responses upstreams; this model's deployment is not one.`,
    `${param}.type`,
  );
}

function filesApiReference(param: string) {
  return invalidRequest(
    "Files API references (file_id) cannot be resolved by the gateway; send the file's bytes (file_data) or a URL instead.",
    param,
  );
}
