import type { CanonicalChatRequest, CanonicalChatResponse } from '../../../src/canonical/index.ts';
import { anthropicMessagesDialect } from '../../../src/dialects/anthropic-messages/anthropic-messages-dialect.ts';
import type { ClientDialect, StreamRenderer, StreamRendererContext } from '../../../src/dialects/dialect.ts';
import { openAIChatDialect } from '../../../src/dialects/openai-chat/openai-chat-dialect.ts';
import { openAIResponsesDialect } from '../../../src/dialects/openai-responses/openai-responses-dialect.ts';
import { checkAnthropicStreamGrammar } from './anthropic-stream-grammar.ts';
import { isJsonObject, readFramedEvents } from './framed-events.ts';
import { checkOpenAIChatStreamGrammar } from './openai-chat-stream-grammar.ts';
import { checkOpenAIResponsesStreamGrammar } from './openai-responses-stream-grammar.ts';
import { stableGeneratedIds } from './provider-cases.ts';

/**
 * The client dialects the golden suite runs every provider fixture through. Adding a dialect is one entry in
 * {@link goldenDialects}: the dialect, a minimal request body for it (non-streamed and streamed), a reassembler that
 * reads its rendered answer and its rendered stream into one {@link Outcome}, its stream grammar check, and the stop
 * reason that means "run the tools".
 */

/** A tool call as a client ends up with it: arguments parsed (kept as text when they are not JSON). */
export interface ToolCallOutcome {
  id: string;
  name: string;
  input: unknown;
}

/** What a client ends up with from a rendered answer, read the same way from the response and from the stream. */
export interface Outcome {
  id: string;
  model: string;
  /** The answer text ('' when none). */
  text: string;
  /** Visible reasoning ('' when none). */
  reasoning: string;
  /** The reasoning's signature where the dialect carries one ('' when none). */
  reasoningSignature: string;
  toolCalls: ToolCallOutcome[];
  /** The dialect's own stop or finish reason. */
  stopReason: unknown;
  /** The dialect's own usage object, as the client reads it at the end. */
  usage: unknown;
}

/** Reads a dialect's rendered output into an {@link Outcome}. */
export interface Reassembler {
  /** From the body of a non-streamed answer. */
  fromResponse(body: string): Outcome;
  /** From the framed text of a stream. */
  fromStream(text: string): Outcome;
}

/** One dialect of the table, as written. */
export interface DialectEntryDefinition<Request> {
  /** Names the snapshot folder; the dialect's id. */
  id: string;
  dialect: ClientDialect<Request, CanonicalChatRequest, CanonicalChatResponse>;
  /** A minimal valid non-streamed request, read with the dialect's own `parseRequest`. */
  requestBody: Record<string, unknown>;
  /** The same request streamed (asking for usage where the dialect makes that optional). */
  streamRequestBody: Record<string, unknown>;
  reassembler: Reassembler;
  /** The problems of a rendered stream against the dialect's grammar; empty when it follows it. */
  checkStreamGrammar(text: string): string[];
  /** The stop reason that tells the client to run tools (`tool_calls`, `tool_use`): it must come with tool calls. */
  toolCallsStopReason: string;
}

/** A dialect entry with its request type erased: what the suite calls. */
export interface DialectEntry {
  id: string;
  renderResponse(answer: CanonicalChatResponse): string;
  createStreamRenderer(context: StreamRendererContext): StreamRenderer;
  reassembler: Reassembler;
  checkStreamGrammar(text: string): string[];
  toolCallsStopReason: string;
}

/** Binds a definition's dialect to its requests (parsed, and checked to be non-streamed and streamed). */
export function defineDialectEntry<Request>(definition: DialectEntryDefinition<Request>): DialectEntry {
  const { id, dialect, reassembler, checkStreamGrammar, toolCallsStopReason } = definition;
  const parse = (body: Record<string, unknown>, stream: boolean): Request => {
    const request = dialect.parseRequest(body);
    if (dialect.summarize(request).stream !== stream)
      throw new Error(`${id}: the request's stream flag is not ${stream}`);
    return request;
  };
  return {
    id,
    reassembler,
    checkStreamGrammar,
    toolCallsStopReason,
    renderResponse(answer) {
      if (dialect.renderResponse === undefined) throw new Error(`${id} renders no translated answers`);
      return dialect.renderResponse(answer, parse(definition.requestBody, false));
    },
    createStreamRenderer(context) {
      if (dialect.createStreamRenderer === undefined) throw new Error(`${id} renders no streams`);
      return dialect.createStreamRenderer(parse(definition.streamRequestBody, true), context);
    },
  };
}

/** Tool arguments as JSON when they parse, else their text. */
function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The JSON payloads of a framed stream, `[DONE]` left out. */
function streamPayloads(text: string): Record<string, unknown>[] {
  return readFramedEvents(text)
    .events.filter((event) => event.data !== '[DONE]')
    .map((event) => JSON.parse(event.data) as Record<string, unknown>);
}

// ---- OpenAI chat ----

interface OpenAIWireToolCall {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface OpenAIWireMessage {
  content?: string | null;
  reasoning_content?: string | null;
  tool_calls?: OpenAIWireToolCall[];
}

interface OpenAIWireChoice {
  index: number;
  message?: OpenAIWireMessage;
  delta?: OpenAIWireMessage;
  finish_reason: string | null;
}

interface OpenAIWireBody {
  id: string;
  model: string;
  choices: OpenAIWireChoice[];
  usage?: unknown;
}

/** OpenAI chat: the response's choice 0; the stream's deltas of choice 0 concatenated, the usage chunk's usage. */
export const openAIChatReassembler: Reassembler = {
  fromResponse(body) {
    const response = JSON.parse(body) as OpenAIWireBody;
    const choice = response.choices.find((candidate) => candidate.index === 0);
    const message = choice?.message ?? {};
    return {
      id: response.id,
      model: response.model,
      text: message.content ?? '',
      reasoning: message.reasoning_content ?? '',
      reasoningSignature: '',
      toolCalls: (message.tool_calls ?? []).map((call) => ({
        id: call.id ?? '',
        name: call.function?.name ?? '',
        input: parsedArguments(call.function?.arguments ?? ''),
      })),
      stopReason: choice?.finish_reason ?? null,
      usage: response.usage,
    };
  },
  fromStream(text) {
    const outcome: Outcome = {
      id: '',
      model: '',
      text: '',
      reasoning: '',
      reasoningSignature: '',
      toolCalls: [],
      stopReason: null,
      usage: undefined,
    };
    const argumentTexts: string[] = [];
    for (const chunk of streamPayloads(text) as unknown as OpenAIWireBody[]) {
      outcome.id ||= chunk.id;
      outcome.model ||= chunk.model;
      if (isJsonObject(chunk.usage)) outcome.usage = chunk.usage;
      for (const choice of chunk.choices.filter((candidate) => candidate.index === 0)) {
        const delta = choice.delta ?? {};
        outcome.text += delta.content ?? '';
        outcome.reasoning += delta.reasoning_content ?? '';
        for (const call of delta.tool_calls ?? []) {
          const index = call.index ?? 0;
          if (call.id !== undefined)
            outcome.toolCalls[index] = { id: call.id, name: call.function?.name ?? '', input: '' };
          argumentTexts[index] = (argumentTexts[index] ?? '') + (call.function?.arguments ?? '');
        }
        if (choice.finish_reason !== null) outcome.stopReason = choice.finish_reason;
      }
    }
    outcome.toolCalls.forEach((call, index) => (call.input = parsedArguments(argumentTexts[index] ?? '')));
    return outcome;
  },
};

// ---- Anthropic Messages ----

type AnthropicWireBlock = { type: string } & Record<string, unknown>;

interface AnthropicWireMessage {
  id: string;
  model: string;
  content: AnthropicWireBlock[];
  stop_reason: unknown;
  usage: Record<string, unknown>;
}

function outcomeOfAnthropicMessage(message: AnthropicWireMessage): Outcome {
  const blocks = (type: string) => message.content.filter((block) => block.type === type);
  return {
    id: message.id,
    model: message.model,
    text: blocks('text')
      .map((block) => block.text)
      .join(''),
    reasoning: blocks('thinking')
      .map((block) => block.thinking)
      .join(''),
    reasoningSignature: blocks('thinking')
      .map((block) => block.signature)
      .join(''),
    toolCalls: blocks('tool_use').map((block) => ({
      id: String(block.id),
      name: String(block.name),
      input: block.input,
    })),
    stopReason: message.stop_reason,
    usage: message.usage,
  };
}

/**
 * Rebuilds the message from Anthropic stream events as the Anthropic SDK does (`MessageStream`): blocks from their
 * starts, deltas appended (a signature replaces), a tool's partial JSON parsed at its stop, and `message_delta`'s
 * stop reason and usage over `message_start`'s.
 */
function rebuildAnthropicMessage(text: string): AnthropicWireMessage {
  let message: AnthropicWireMessage | undefined;
  const partialJson = new Map<number, string>();
  for (const event of streamPayloads(text)) {
    if (event.type === 'message_start') {
      message = { ...(event.message as AnthropicWireMessage), content: [] };
      continue;
    }
    if (message === undefined) continue;
    const index = event.index as number;
    const block = message.content[index];
    const delta = (event.delta ?? {}) as Record<string, unknown>;
    switch (event.type) {
      case 'content_block_start':
        message.content[index] = { ...(event.content_block as AnthropicWireBlock) };
        break;
      case 'content_block_delta':
        if (block === undefined) break;
        if (delta.type === 'text_delta') block.text = `${String(block.text)}${String(delta.text)}`;
        if (delta.type === 'thinking_delta') block.thinking = `${String(block.thinking)}${String(delta.thinking)}`;
        if (delta.type === 'signature_delta') block.signature = delta.signature;
        if (delta.type === 'input_json_delta')
          partialJson.set(index, `${partialJson.get(index) ?? ''}${String(delta.partial_json)}`);
        break;
      case 'content_block_stop':
        if (block?.type === 'tool_use') block.input = parsedArguments(partialJson.get(index) || '{}');
        break;
      case 'message_delta':
        message.stop_reason = delta.stop_reason;
        message.usage = { ...message.usage, ...(event.usage as Record<string, unknown>) };
        break;
    }
  }
  if (message === undefined) throw new Error('no message_start in the stream');
  return message;
}

export const anthropicMessagesReassembler: Reassembler = {
  fromResponse: (body) => outcomeOfAnthropicMessage(JSON.parse(body) as AnthropicWireMessage),
  fromStream: (text) => outcomeOfAnthropicMessage(rebuildAnthropicMessage(text)),
};

// ---- OpenAI Responses ----

type ResponsesWireItem = { type: string } & Record<string, unknown>;

interface ResponsesWireResponse {
  id: string;
  model: string;
  status: string;
  incomplete_details?: { reason?: string } | null;
  output: ResponsesWireItem[];
  usage: unknown;
}

/** The stop reason of a completed response that calls tools (see {@link responsesStopReason}). */
const responsesToolCallsStopReason = 'completed:function_call';

/**
 * The stop reason a Responses client acts on, which the API spells as a status and the output: a completed response
 * whose output holds `function_call` items asks the client to run them ({@link responsesToolCallsStopReason}); an
 * incomplete one says why (`incomplete:max_output_tokens`); otherwise the status (`completed`, `failed`).
 */
function responsesStopReason(response: ResponsesWireResponse): string {
  if (response.status === 'incomplete') return `incomplete:${response.incomplete_details?.reason ?? ''}`;
  const callsTools = response.output.some((item) => item.type === 'function_call');
  return response.status === 'completed' && callsTools ? responsesToolCallsStopReason : response.status;
}

/** Text, reasoning and tool calls as a client reads them off output items. */
function responsesItemsOutcome(
  output: readonly ResponsesWireItem[],
): Pick<Outcome, 'text' | 'reasoning' | 'toolCalls'> {
  const parts = (type: string, list: string, partType: string) =>
    output
      .filter((item) => item.type === type)
      .flatMap((item) => (item[list] ?? []) as Record<string, unknown>[])
      .filter((part) => part.type === partType)
      .map((part) => String(part.text))
      .join('');
  return {
    text: parts('message', 'content', 'output_text'),
    reasoning: parts('reasoning', 'summary', 'summary_text'),
    toolCalls: output
      .filter((item) => item.type === 'function_call')
      .map((item) => ({
        id: String(item.call_id),
        name: String(item.name),
        input: parsedArguments(String(item.arguments)),
      })),
  };
}

/**
 * Rebuilds the output items from Responses stream events as a client that follows the deltas does (the openai SDK's
 * `ResponseStream` snapshot): items from `output_item.added`, parts from `content_part.added` and
 * `reasoning_summary_part.added`, texts and arguments from their deltas; the `...done` events, which repeat what the
 * deltas spelled, are left to the grammar check. The stop reason and the usage are the terminal response's.
 */
function rebuildResponsesOutcome(text: string): Outcome {
  const items: ResponsesWireItem[] = [];
  let first: ResponsesWireResponse | undefined;
  let terminal: ResponsesWireResponse | undefined;
  for (const event of streamPayloads(text)) {
    const item = items[event.output_index as number];
    const partOf = (list: string, index: unknown) =>
      ((item?.[list] ?? []) as Record<string, unknown>[])[index as number] ?? {};
    switch (event.type) {
      case 'response.created':
        first = event.response as ResponsesWireResponse;
        break;
      case 'response.output_item.added': {
        const added = structuredClone(event.item) as ResponsesWireItem;
        if (added.type === 'message') added.content = [];
        if (added.type === 'reasoning') added.summary = [];
        if (added.type === 'function_call') added.arguments = '';
        items[event.output_index as number] = added;
        break;
      }
      case 'response.content_part.added':
      case 'response.reasoning_summary_part.added': {
        const [list, index] =
          event.type === 'response.content_part.added'
            ? ['content', event.content_index]
            : ['summary', event.summary_index];
        if (item !== undefined) ((item[list] ??= []) as unknown[])[index as number] = structuredClone(event.part);
        break;
      }
      case 'response.output_text.delta': {
        const part = partOf('content', event.content_index);
        part.text = `${String(part.text ?? '')}${String(event.delta)}`;
        break;
      }
      case 'response.reasoning_summary_text.delta': {
        const part = partOf('summary', event.summary_index);
        part.text = `${String(part.text ?? '')}${String(event.delta)}`;
        break;
      }
      case 'response.function_call_arguments.delta':
        if (item !== undefined) item.arguments = `${String(item.arguments ?? '')}${String(event.delta)}`;
        break;
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
        terminal = event.response as ResponsesWireResponse;
        break;
    }
  }
  if (first === undefined || terminal === undefined) throw new Error('no response.created or no terminal event');
  return {
    id: first.id,
    model: terminal.model,
    ...responsesItemsOutcome(items),
    reasoningSignature: '',
    stopReason: responsesStopReason(terminal),
    usage: terminal.usage,
  };
}

/**
 * OpenAI Responses: the response's output items; the stream's items rebuilt from their deltas, with the terminal
 * response's status and usage. The gateway's per-call ids are made stable first ({@link stableGeneratedIds}): a
 * streamed and a non-streamed call get different ids, which is not a difference in the answer.
 */
export const openAIResponsesReassembler: Reassembler = {
  fromResponse(body) {
    const response = JSON.parse(stableGeneratedIds(body)) as ResponsesWireResponse;
    return {
      id: response.id,
      model: response.model,
      ...responsesItemsOutcome(response.output),
      reasoningSignature: '',
      stopReason: responsesStopReason(response),
      usage: response.usage,
    };
  },
  fromStream: (text) => rebuildResponsesOutcome(stableGeneratedIds(text)),
};

// ---- The table ----

/** Every client dialect the suite covers. */
export const goldenDialects: readonly DialectEntry[] = [
  defineDialectEntry({
    id: 'openai-chat',
    dialect: openAIChatDialect,
    requestBody: { model: 'golden', messages: [{ role: 'user', content: 'Hello' }] },
    streamRequestBody: {
      model: 'golden',
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
      stream_options: { include_usage: true },
    },
    reassembler: openAIChatReassembler,
    checkStreamGrammar: checkOpenAIChatStreamGrammar,
    toolCallsStopReason: 'tool_calls',
  }),
  defineDialectEntry({
    id: 'anthropic-messages',
    dialect: anthropicMessagesDialect,
    requestBody: { model: 'golden', max_tokens: 1024, messages: [{ role: 'user', content: 'Hello' }] },
    streamRequestBody: {
      model: 'golden',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
    },
    reassembler: anthropicMessagesReassembler,
    checkStreamGrammar: checkAnthropicStreamGrammar,
    toolCallsStopReason: 'tool_use',
  }),
  defineDialectEntry({
    id: 'openai-responses',
    dialect: openAIResponsesDialect,
    requestBody: { model: 'golden', input: 'Hello' },
    streamRequestBody: { model: 'golden', input: 'Hello', stream: true },
    reassembler: openAIResponsesReassembler,
    checkStreamGrammar: checkOpenAIResponsesStreamGrammar,
    toolCallsStopReason: responsesToolCallsStopReason,
  }),
];
