import * as z from 'zod/mini';
import type { CanonicalStreamPart, ChatStreamReducer } from '../../src/canonical/index.ts';
import { GatewayError } from '../../src/errors.ts';
import type { DecodedStreamEvent } from '../../src/framing/index.ts';
import { cohereErrorMapper, invalidFields } from './cohere-error.ts';
import { mapCohereFinishReason } from './cohere-finish-reason.ts';
import { cohereProviderId } from './cohere-options.ts';
import { cohereUsageSchema, toCanonicalCohereUsage } from './cohere-usage.ts';

/**
 * One event of Cohere's v2 chat stream: only the fields the reducer reads, all optional (each event type fills its
 * own; see the reducer). Every event carries its `type` in its data as well as in the SSE `event:` line.
 */
const cohereStreamEventSchema = z.object({
  type: z.nullish(z.string()),
  id: z.nullish(z.string()),
  index: z.nullish(z.number()),
  message: z.nullish(z.unknown()),
  delta: z.nullish(
    z.object({
      message: z.nullish(
        z.object({
          content: z.nullish(
            z.object({ type: z.nullish(z.string()), text: z.nullish(z.string()), thinking: z.nullish(z.string()) }),
          ),
          tool_plan: z.nullish(z.string()),
          tool_calls: z.nullish(
            z.object({
              id: z.nullish(z.string()),
              function: z.nullish(z.object({ name: z.nullish(z.string()), arguments: z.nullish(z.string()) })),
            }),
          ),
        }),
      ),
      finish_reason: z.nullish(z.string()),
      usage: z.nullish(cohereUsageSchema),
    }),
  ),
});

type CohereStreamEvent = z.infer<typeof cohereStreamEventSchema>;

/** A tool call being streamed, by Cohere's tool call `index`. */
interface CohereStreamToolCall {
  toolIndex: number;
  receivedArguments: boolean;
  ended: boolean;
}

/** Per-stream state of {@link cohereChatStream}. */
export interface CohereStreamState {
  started: boolean;
  /** The kind of each content block, by Cohere's content `index`. */
  blocks: Record<number, 'text' | 'reasoning'>;
  /** Tool calls by Cohere's tool call `index`. */
  toolCalls: Record<number, CohereStreamToolCall>;
  toolCount: number;
  /** Whether `message-end`, the stream's last event, came. */
  ended: boolean;
}

/**
 * The reducer over Cohere's v2 chat stream (one choice, index 0):
 * - `message-start` -> `response-start` with Cohere's id and an empty model (Cohere names none; the renderers use
 *   the model the gateway called, their `fallbackModel`);
 * - `content-start`/`-end` -> `text-start`/`-end`, or `reasoning-start`/`-end` for a `thinking` block
 *   (command-a-reasoning); `content-delta` -> `text-delta` (`content.text`) or `reasoning-delta`
 *   (`content.thinking`);
 * - `tool-plan-delta` -> `text-delta`, as the non-streamed reader puts `tool_plan` first in the text;
 * - `tool-call-start` -> `tool-input-start` (its `toolIndex` counted among tool calls), `tool-call-delta` ->
 *   `tool-input-delta`, `tool-call-end` -> `tool-input-end` (after a `{}` delta for a call that streamed no
 *   arguments, as the non-streamed reader gives it);
 * - `message-end` -> `finish` then `usage` (billed units, see `toCanonicalCohereUsage`); the stream is then complete;
 * - `citation-start`/`-end`, `debug` and unknown events are ignored. An event without a `type` that carries a
 *   `message` (an error body sent inside the stream) is thrown as the {@link GatewayError} it maps to.
 *
 * `onEnd` reports a stream that ended before `message-end` as an `error` part (502 `upstream_stream_incomplete`).
 */
export const cohereChatStream: ChatStreamReducer<CohereStreamState> = {
  init(): CohereStreamState {
    return { started: false, blocks: {}, toolCalls: {}, toolCount: 0, ended: false };
  },

  onEvent(state: CohereStreamState, event: DecodedStreamEvent): CanonicalStreamPart[] {
    const data = readEvent(event);
    const parts = reduceEvent(state, data, event);
    // Cohere always opens with message-start; should it not, the answer still begins with a response-start.
    if (parts.length > 0 && !state.started) parts.unshift(...onMessageStart(state, { id: null }));
    return parts;
  },

  isComplete(state: CohereStreamState): boolean {
    return state.ended;
  },

  onEnd(state: CohereStreamState): CanonicalStreamPart[] {
    if (state.ended) return [];
    state.ended = true;
    const error = new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_stream_incomplete',
      provider: cohereProviderId,
      retryable: !state.started,
      message: 'The Cohere stream ended before its message-end event; the answer may be incomplete.',
    });
    return [{ type: 'error', error }];
  },
};

function reduceEvent(
  state: CohereStreamState,
  data: CohereStreamEvent,
  event: DecodedStreamEvent,
): CanonicalStreamPart[] {
  switch (data.type ?? event.type) {
    case 'message-start':
      return onMessageStart(state, data);
    case 'content-start':
      return onContentStart(state, data);
    case 'content-delta':
      return onContentDelta(data);
    case 'content-end':
      return onContentEnd(state, data);
    case 'tool-plan-delta': {
      const plan = data.delta?.message?.tool_plan;
      return typeof plan === 'string' && plan.length > 0 ? [{ type: 'text-delta', choiceIndex: 0, delta: plan }] : [];
    }
    case 'tool-call-start':
      return onToolCallStart(state, data);
    case 'tool-call-delta':
      return onToolCallDelta(state, data);
    case 'tool-call-end':
      return onToolCallEnd(state, data);
    case 'message-end':
      return onMessageEnd(state, data, event.data);
    case undefined:
    case null:
      if (typeof data.message === 'string') throw cohereErrorMapper.mapInBand(event.data);
      return [];
    default:
      return [];
  }
}

function readEvent(event: DecodedStreamEvent): CohereStreamEvent {
  const parsed = cohereStreamEventSchema.safeParse(event.data);
  if (parsed.success) return parsed.data;
  const fields = invalidFields(parsed.error.issues);
  throw invalidStream(`Cohere sent a stream event the gateway cannot read (invalid: ${fields}).`, event.data);
}

function invalidStream(message: string, upstreamBody: unknown): GatewayError {
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_invalid_stream',
    provider: cohereProviderId,
    message,
    upstreamBody,
  });
}

function onMessageStart(state: CohereStreamState, data: Pick<CohereStreamEvent, 'id'>): CanonicalStreamPart[] {
  if (state.started) return [];
  state.started = true;
  return [{ type: 'response-start', id: data.id ?? '', model: '', created: Math.floor(Date.now() / 1000) }];
}

function onContentStart(state: CohereStreamState, data: CohereStreamEvent): CanonicalStreamPart[] {
  const content = data.delta?.message?.content;
  const index = data.index ?? 0;
  const reasoning = content?.type === 'thinking' || (content?.type == null && typeof content?.thinking === 'string');
  state.blocks[index] = reasoning ? 'reasoning' : 'text';
  const parts: CanonicalStreamPart[] = [{ type: reasoning ? 'reasoning-start' : 'text-start', choiceIndex: 0 }];
  return [...parts, ...contentDeltas(content)];
}

function onContentDelta(data: CohereStreamEvent): CanonicalStreamPart[] {
  return contentDeltas(data.delta?.message?.content);
}

function contentDeltas(content: { text?: string | null; thinking?: string | null } | null | undefined) {
  const parts: CanonicalStreamPart[] = [];
  if (typeof content?.thinking === 'string' && content.thinking.length > 0)
    parts.push({ type: 'reasoning-delta', choiceIndex: 0, delta: content.thinking });
  if (typeof content?.text === 'string' && content.text.length > 0)
    parts.push({ type: 'text-delta', choiceIndex: 0, delta: content.text });
  return parts;
}

function onContentEnd(state: CohereStreamState, data: CohereStreamEvent): CanonicalStreamPart[] {
  const index = data.index ?? 0;
  const kind = state.blocks[index];
  if (kind === undefined) return [];
  delete state.blocks[index];
  return [{ type: kind === 'reasoning' ? 'reasoning-end' : 'text-end', choiceIndex: 0 }];
}

function onToolCallStart(state: CohereStreamState, data: CohereStreamEvent): CanonicalStreamPart[] {
  const call = data.delta?.message?.tool_calls;
  const id = call?.id;
  const name = call?.function?.name;
  if (typeof id !== 'string' || typeof name !== 'string')
    throw invalidStream('Cohere sent tool-call-start without a tool call id or function name.', data);
  const toolIndex = state.toolCount++;
  const argumentsText = call?.function?.arguments ?? '';
  state.toolCalls[data.index ?? toolIndex] = { toolIndex, receivedArguments: argumentsText.length > 0, ended: false };
  const parts: CanonicalStreamPart[] = [{ type: 'tool-input-start', choiceIndex: 0, toolIndex, id, name }];
  if (argumentsText.length > 0)
    parts.push({ type: 'tool-input-delta', choiceIndex: 0, toolIndex, delta: argumentsText });
  return parts;
}

function onToolCallDelta(state: CohereStreamState, data: CohereStreamEvent): CanonicalStreamPart[] {
  const call = state.toolCalls[data.index ?? state.toolCount - 1];
  const fragment = data.delta?.message?.tool_calls?.function?.arguments;
  if (call === undefined || call.ended || typeof fragment !== 'string' || fragment.length === 0) return [];
  call.receivedArguments = true;
  return [{ type: 'tool-input-delta', choiceIndex: 0, toolIndex: call.toolIndex, delta: fragment }];
}

function onToolCallEnd(state: CohereStreamState, data: CohereStreamEvent): CanonicalStreamPart[] {
  const call = state.toolCalls[data.index ?? state.toolCount - 1];
  return call === undefined ? [] : endToolCall(call);
}

function endToolCall(call: CohereStreamToolCall): CanonicalStreamPart[] {
  if (call.ended) return [];
  call.ended = true;
  const end: CanonicalStreamPart = { type: 'tool-input-end', choiceIndex: 0, toolIndex: call.toolIndex };
  if (call.receivedArguments) return [end];
  return [{ type: 'tool-input-delta', choiceIndex: 0, toolIndex: call.toolIndex, delta: '{}' }, end];
}

function onMessageEnd(state: CohereStreamState, data: CohereStreamEvent, raw: unknown): CanonicalStreamPart[] {
  if (state.ended) return [];
  state.ended = true;
  // Blocks and calls Cohere left open are closed before the finish, as the seam's part order requires.
  const parts: CanonicalStreamPart[] = [];
  for (const kind of Object.values(state.blocks))
    parts.push({ type: kind === 'reasoning' ? 'reasoning-end' : 'text-end', choiceIndex: 0 });
  state.blocks = {};
  for (const call of Object.values(state.toolCalls)) parts.push(...endToolCall(call));
  parts.push({ type: 'finish', choiceIndex: 0, finishReason: mapCohereFinishReason(data.delta?.finish_reason) });
  const usage = data.delta?.usage;
  if (usage !== null && usage !== undefined) {
    const rawUsage = (raw as { delta: { usage: unknown } }).delta.usage;
    parts.push({ type: 'usage', usage: toCanonicalCohereUsage(usage, rawUsage) });
  }
  return parts;
}
