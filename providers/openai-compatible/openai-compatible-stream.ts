import * as z from 'zod/mini';
import type {
  CanonicalStreamPart,
  CanonicalUsage,
  ChatStreamReducer,
  StreamEnding,
} from '../../src/canonical/index.ts';
import { upstreamError } from '../../src/errors.ts';
import type { DecodedStreamEvent } from '../../src/framing/index.ts';
import {
  invalidOpenAICompatibleBody,
  isOpenAICompatibleErrorBody,
  mapOpenAICompatibleInBandError,
} from './openai-compatible-error.ts';
import { mapOpenAICompatibleFinishReason } from './openai-compatible-finish-reason.ts';
import {
  fallbackToolCallId,
  nowInSeconds,
  openAICompatibleArgumentsSchema,
  openAICompatibleArgumentsText,
  openAICompatibleContentSchema,
  readOpenAICompatibleContent,
} from './openai-compatible-response.ts';
import { convertOpenAICompatibleUsage, openAICompatibleUsageSchema } from './openai-compatible-usage.ts';

/** One `chat.completion.chunk`: only the fields read, tolerant of what compatible servers omit. */
const chatCompletionChunkSchema = z.object({
  id: z.nullish(z.string()),
  model: z.nullish(z.string()),
  created: z.nullish(z.number()),
  choices: z.nullish(
    z.array(
      z.object({
        index: z.nullish(z.number()),
        delta: z.nullish(
          z.object({
            content: openAICompatibleContentSchema,
            reasoning_content: z.nullish(z.string()),
            reasoning: z.nullish(z.string()),
            tool_calls: z.nullish(
              z.array(
                z.object({
                  index: z.nullish(z.number()),
                  id: z.nullish(z.string()),
                  function: z.nullish(
                    z.object({ name: z.nullish(z.string()), arguments: openAICompatibleArgumentsSchema }),
                  ),
                }),
              ),
            ),
          }),
        ),
        finish_reason: z.nullish(z.string()),
      }),
    ),
  ),
  usage: z.nullish(openAICompatibleUsageSchema),
  /** Groq reports usage here on the last chunk. */
  x_groq: z.nullish(z.object({ usage: z.nullish(openAICompatibleUsageSchema) })),
});

type ChunkToolCall = NonNullable<
  NonNullable<NonNullable<z.infer<typeof chatCompletionChunkSchema>['choices']>[number]['delta']>['tool_calls']
>[number];

/** A tool call being streamed. Arguments that arrive before the tool's name are held until it is known. */
interface StreamedToolCall {
  id: string;
  name: string | undefined;
  started: boolean;
  pendingArguments: string;
}

/** One choice being streamed. */
interface StreamedChoice {
  finished: boolean;
  tools: Map<number, StreamedToolCall>;
  toolIndexById: Map<string, number>;
  lastToolIndex: number | undefined;
}

/** Per-stream state of {@link openAICompatibleChatStream}. */
export interface OpenAICompatibleStreamState {
  started: boolean;
  choices: Map<number, StreamedChoice>;
  /** The latest usage the upstream reported; emitted once, at the end. */
  usage: CanonicalUsage | undefined;
}

function startIfNeeded(
  state: OpenAICompatibleStreamState,
  parts: CanonicalStreamPart[],
  id?: string | null,
  model?: string | null,
  created?: number | null,
): void {
  if (state.started) return;
  state.started = true;
  parts.push({ type: 'response-start', id: id ?? '', model: model ?? '', created: created ?? nowInSeconds() });
}

function choiceState(state: OpenAICompatibleStreamState, choiceIndex: number): StreamedChoice {
  let choice = state.choices.get(choiceIndex);
  if (choice === undefined) {
    choice = { finished: false, tools: new Map(), toolIndexById: new Map(), lastToolIndex: undefined };
    state.choices.set(choiceIndex, choice);
  }
  return choice;
}

/**
 * Which tool a delta belongs to. OpenAI always sends `index`; for servers that omit it, a new id opens a new tool
 * and a delta without id continues the last one.
 */
function toolIndexOf(choice: StreamedChoice, call: ChunkToolCall): number {
  if (call.index !== null && call.index !== undefined) return call.index;
  if (call.id !== null && call.id !== undefined && call.id !== '') {
    const known = choice.toolIndexById.get(call.id);
    if (known !== undefined) return known;
    const next = choice.tools.size;
    choice.toolIndexById.set(call.id, next);
    return next;
  }
  return choice.lastToolIndex ?? 0;
}

function startTool(choiceIndex: number, toolIndex: number, tool: StreamedToolCall, parts: CanonicalStreamPart[]): void {
  tool.started = true;
  parts.push({
    type: 'tool-input-start',
    choiceIndex,
    toolIndex,
    id: tool.id === '' ? fallbackToolCallId() : tool.id,
    name: tool.name ?? '',
  });
  if (tool.pendingArguments !== '')
    parts.push({ type: 'tool-input-delta', choiceIndex, toolIndex, delta: tool.pendingArguments });
  tool.pendingArguments = '';
}

function onToolCallDelta(
  choiceIndex: number,
  choice: StreamedChoice,
  call: ChunkToolCall,
  parts: CanonicalStreamPart[],
): void {
  const toolIndex = toolIndexOf(choice, call);
  choice.lastToolIndex = toolIndex;
  let tool = choice.tools.get(toolIndex);
  if (tool === undefined) {
    tool = { id: '', name: undefined, started: false, pendingArguments: '' };
    choice.tools.set(toolIndex, tool);
  }
  if (tool.id === '' && call.id !== null && call.id !== undefined) tool.id = call.id;
  const name = call.function?.name;
  if (tool.name === undefined && name !== null && name !== undefined && name !== '') tool.name = name;
  const delta = openAICompatibleArgumentsText(call.function?.arguments);
  if (!tool.started && tool.name !== undefined) startTool(choiceIndex, toolIndex, tool, parts);
  if (delta === '') return;
  if (tool.started) parts.push({ type: 'tool-input-delta', choiceIndex, toolIndex, delta });
  else tool.pendingArguments += delta;
}

/** Starts tools that never got a name, so no streamed arguments are lost before the choice finishes. */
function flushTools(choiceIndex: number, choice: StreamedChoice, parts: CanonicalStreamPart[]): void {
  for (const [toolIndex, tool] of choice.tools) if (!tool.started) startTool(choiceIndex, toolIndex, tool, parts);
}

function onChunk(state: OpenAICompatibleStreamState, data: unknown): CanonicalStreamPart[] {
  if (isOpenAICompatibleErrorBody(data)) throw mapOpenAICompatibleInBandError(data);
  const parsed = chatCompletionChunkSchema.safeParse(data);
  if (!parsed.success) throw invalidOpenAICompatibleBody('stream chunk', parsed.error.issues, data);
  const chunk = parsed.data;
  const parts: CanonicalStreamPart[] = [];
  const choices = chunk.choices ?? [];
  // Azure's first chunk (prompt filter results) has an empty id and no choices: the response starts after it.
  if ((chunk.id !== null && chunk.id !== undefined && chunk.id !== '') || choices.length > 0)
    startIfNeeded(state, parts, chunk.id, chunk.model, chunk.created);
  choices.forEach((choice, position) => {
    const choiceIndex = choice.index ?? position;
    const streamed = choiceState(state, choiceIndex);
    // The seam promises nothing follows a choice's finish; a server that sends more for it is not heard.
    if (streamed.finished) return;
    const delta = choice.delta;
    if (delta !== null && delta !== undefined) {
      const content = readOpenAICompatibleContent(delta.content);
      const reasoning = delta.reasoning_content || delta.reasoning || content.reasoning;
      if (reasoning) parts.push({ type: 'reasoning-delta', choiceIndex, delta: reasoning });
      if (content.text) parts.push({ type: 'text-delta', choiceIndex, delta: content.text });
      for (const call of delta.tool_calls ?? []) onToolCallDelta(choiceIndex, streamed, call, parts);
    }
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
      flushTools(choiceIndex, streamed, parts);
      streamed.finished = true;
      parts.push({
        type: 'finish',
        choiceIndex,
        finishReason: mapOpenAICompatibleFinishReason(choice.finish_reason, streamed.tools.size > 0),
      });
    }
  });
  const usage = chunk.usage ?? chunk.x_groq?.usage;
  if (usage !== null && usage !== undefined) state.usage = convertOpenAICompatibleUsage(usage);
  return parts;
}

/**
 * The reducer over OpenAI `chat.completion.chunk` events (OpenAI and every compatible server).
 *
 * - The first chunk with an id or a choice yields `response-start`.
 * - `delta.content` yields `text-delta`; `delta.reasoning_content` (DeepSeek) or `delta.reasoning` (OpenRouter,
 *   vLLM) yields `reasoning-delta`; empty strings yield nothing.
 * - `delta.tool_calls` yields `tool-input-start` the first time a tool index is seen with a name, then
 *   `tool-input-delta` per arguments fragment; choices are kept apart by `index` (n > 1 works).
 * - `finish_reason` yields one `finish` per choice; a choice that never sent one gets `finish` `other` at the end.
 * - Usage (the `choices: []` chunk OpenAI sends when `include_usage` is set, or Groq's `x_groq.usage`) is held
 *   and yielded once by `onEnd`, so servers that repeat cumulative usage on several chunks are counted once.
 * - An `{error:{...}}` event throws the mapped GatewayError; a stream that closes without `data: [DONE]` ends with an
 *   `error` part (502 `upstream_stream_incomplete`): the answer was cut off, or at best its end was not confirmed.
 *
 * Delta `refusal` and `logprobs` have no canonical stream part and are dropped.
 *
 * @example
 * const state = openAICompatibleChatStream.init();
 * for (const event of events) parts.push(...openAICompatibleChatStream.onEvent(state, event));
 * parts.push(...openAICompatibleChatStream.onEnd(state));
 */
export const openAICompatibleChatStream: ChatStreamReducer<OpenAICompatibleStreamState> = {
  init(): OpenAICompatibleStreamState {
    return { started: false, choices: new Map(), usage: undefined };
  },
  onEvent(state: OpenAICompatibleStreamState, event: DecodedStreamEvent): CanonicalStreamPart[] {
    return onChunk(state, event.data);
  },
  onEnd(state: OpenAICompatibleStreamState, ending?: StreamEnding): CanonicalStreamPart[] {
    const parts: CanonicalStreamPart[] = [];
    for (const [choiceIndex, choice] of state.choices) {
      if (choice.finished) continue;
      flushTools(choiceIndex, choice, parts);
      choice.finished = true;
      parts.push({ type: 'finish', choiceIndex, finishReason: { unified: 'other', raw: undefined } });
    }
    if (state.usage !== undefined) {
      startIfNeeded(state, parts);
      parts.push({ type: 'usage', usage: state.usage });
    }
    // Without the framing's word on it (a caller of the reducer alone), the end is taken as complete.
    if (ending !== undefined && !ending.sentinel) {
      parts.push({
        type: 'error',
        error: upstreamError(
          'upstream_stream_incomplete',
          'openai-compatible',
          'The upstream stream ended without its final [DONE] event; the answer may be incomplete.',
          { retryable: !state.started },
        ),
      });
    }
    return parts;
  },
};
