import * as z from 'zod/mini';
import type { CanonicalStreamPart, ChatStreamReducer } from '../../src/canonical/index.ts';
import { GatewayError } from '../../src/errors.ts';
import type { DecodedStreamEvent } from '../../src/framing/index.ts';
import {
  closeContentBlock,
  longestReasoningSignature,
  signatureTooLong,
  type ContentBlockState,
} from '../anthropic/anthropic-stream.ts';
import { jsonResponseToolName } from '../anthropic/anthropic-json-response.ts';
import { mapBedrockFinishReason } from './bedrock-finish-reason.ts';
import { newBedrockResponseId } from './bedrock-response.ts';
import { bedrockUsageSchema, toCanonicalBedrockUsage } from './bedrock-usage.ts';

/**
 * One ConverseStream event's payload (the event's name is its `:event-type` header): only the fields the reducer
 * reads, all optional. Bedrock pads payloads with a random `p` field, which is ignored like any other.
 */
const bedrockStreamEventSchema = z.object({
  contentBlockIndex: z.nullish(z.number()),
  start: z.nullish(z.object({ toolUse: z.nullish(z.object({ toolUseId: z.string(), name: z.string() })) })),
  delta: z.nullish(
    z.object({
      text: z.nullish(z.string()),
      toolUse: z.nullish(z.object({ input: z.nullish(z.string()) })),
      reasoningContent: z.nullish(z.object({ text: z.nullish(z.string()), signature: z.nullish(z.string()) })),
    }),
  ),
  stopReason: z.nullish(z.string()),
  usage: z.nullish(bedrockUsageSchema),
});

type BedrockStreamEvent = z.infer<typeof bedrockStreamEventSchema>;

/** Per-stream state of {@link bedrockChatStream}. */
export interface BedrockStreamState {
  /** Content blocks seen so far, by Converse's block index. */
  /** The open content blocks by Converse's `contentBlockIndex` (the same blocks as Anthropic's). */
  blocks: Record<number, ContentBlockState>;
  /** Client tool calls seen so far; the next one gets this as its `toolIndex`. */
  toolCount: number;
  answeredWithJsonTool: boolean;
  started: boolean;
  /** Whether `messageStop` (the stop reason) came. */
  finished: boolean;
  /** Whether `metadata` (the usage, Converse's last event) came. */
  completed: boolean;
}

/**
 * The reducer over Converse's stream (one choice, index 0), from the events the shared AWS event-stream decoder
 * yields (`{type: <:event-type>, data: <payload>}`; exception messages were already thrown there as GatewayErrors):
 * - `messageStart` -> `response-start`. Converse names neither an id nor the model: the id is made (see
 *   `newBedrockResponseId`) and the model is `''`, for which the client's renderer names the deployment's model;
 * - Converse opens only tool blocks (`contentBlockStart` with `start.toolUse`) -> `tool-input-start`, its `toolIndex`
 *   counted among tool calls only (0, 1, ...), not content blocks; text and reasoning blocks begin with their first
 *   delta (`text-start` / `reasoning-start`);
 * - `contentBlockDelta`: `text` -> `text-delta`, `toolUse.input` -> `tool-input-delta`, `reasoningContent.text` ->
 *   `reasoning-delta`; `reasoningContent.signature` is kept and handed on with `reasoning-end`; redacted reasoning is
 *   dropped. A tool call that streamed no input gets `{}` at its `contentBlockStop`;
 * - the gateway's JSON response tool streams as `text-delta`s (see `bedrock-request.ts`);
 * - `messageStop` -> `finish`; `metadata` (which follows it) -> the one `usage` part, and the stream is complete
 *   ({@link ChatStreamReducer.isComplete}) only then, so the usage is not cut off.
 *
 * `onEnd` reports a stream that ended before `messageStop` as an `error` part (502 `upstream_stream_incomplete`); one
 * that ended after it but without `metadata` is a whole answer without usage.
 */
export const bedrockChatStream: ChatStreamReducer<BedrockStreamState> = {
  init(): BedrockStreamState {
    return { blocks: {}, toolCount: 0, answeredWithJsonTool: false, started: false, finished: false, completed: false };
  },

  onEvent(state: BedrockStreamState, event: DecodedStreamEvent): CanonicalStreamPart[] {
    const data = readEvent(event);
    const parts: CanonicalStreamPart[] = [];
    if (!state.started) {
      state.started = true;
      parts.push({
        type: 'response-start',
        id: newBedrockResponseId(),
        model: '',
        created: Math.floor(Date.now() / 1000),
      });
    }
    switch (event.type) {
      case 'contentBlockStart':
        parts.push(...onContentBlockStart(state, data));
        break;
      case 'contentBlockDelta':
        parts.push(...onContentBlockDelta(state, data));
        break;
      case 'contentBlockStop':
        parts.push(...onContentBlockStop(state, data));
        break;
      case 'messageStop':
        if (!state.finished) {
          state.finished = true;
          const jsonOnly = state.answeredWithJsonTool && state.toolCount === 0;
          parts.push({
            type: 'finish',
            choiceIndex: 0,
            finishReason: mapBedrockFinishReason(data.stopReason, jsonOnly),
          });
        }
        break;
      case 'metadata':
        state.completed = true;
        if (data.usage !== null && data.usage !== undefined) {
          const raw = (event.data as { usage: unknown }).usage;
          parts.push({ type: 'usage', usage: toCanonicalBedrockUsage(data.usage, raw) });
        }
        break;
      default:
        // messageStart (handled above) and events the gateway does not translate.
        break;
    }
    return parts;
  },

  isComplete(state: BedrockStreamState): boolean {
    return state.completed;
  },

  onEnd(state: BedrockStreamState): CanonicalStreamPart[] {
    if (state.finished) return [];
    state.finished = true;
    const error = new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_stream_incomplete',
      provider: 'bedrock',
      retryable: !state.started,
      message: 'The Bedrock stream ended before the message was complete (no messageStop event).',
    });
    return [{ type: 'error', error }];
  },
};

function readEvent(event: DecodedStreamEvent): BedrockStreamEvent {
  const parsed = bedrockStreamEventSchema.safeParse(event.data);
  if (parsed.success) return parsed.data;
  const fields = parsed.error.issues.map((issue) => issue.path.join('.') || '(root)').join(', ');
  throw new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_invalid_stream',
    provider: 'bedrock',
    message: `Bedrock sent a stream event the gateway cannot read (${event.type ?? 'unnamed'}, invalid: ${fields}).`,
    upstreamBody: event.data,
  });
}

function onContentBlockStart(state: BedrockStreamState, data: BedrockStreamEvent): CanonicalStreamPart[] {
  const toolUse = data.start?.toolUse;
  if (typeof data.contentBlockIndex !== 'number' || toolUse === null || toolUse === undefined) return [];
  if (toolUse.name === jsonResponseToolName) {
    state.blocks[data.contentBlockIndex] = { kind: 'json-answer', receivedInput: false };
    state.answeredWithJsonTool = true;
    return [];
  }
  const toolIndex = state.toolCount++;
  state.blocks[data.contentBlockIndex] = { kind: 'tool', toolIndex, receivedInput: false };
  return [{ type: 'tool-input-start', choiceIndex: 0, toolIndex, id: toolUse.toolUseId, name: toolUse.name }];
}

function onContentBlockDelta(state: BedrockStreamState, data: BedrockStreamEvent): CanonicalStreamPart[] {
  const delta = data.delta;
  if (delta === null || delta === undefined || typeof data.contentBlockIndex !== 'number') return [];
  const index = data.contentBlockIndex;
  const block = state.blocks[index];
  if (typeof delta.text === 'string') {
    const parts: CanonicalStreamPart[] = [];
    if (block === undefined) {
      state.blocks[index] = { kind: 'text' };
      parts.push({ type: 'text-start', choiceIndex: 0 });
    }
    if (delta.text.length > 0) parts.push({ type: 'text-delta', choiceIndex: 0, delta: delta.text });
    return parts;
  }
  if (delta.reasoningContent !== null && delta.reasoningContent !== undefined) {
    const parts: CanonicalStreamPart[] = [];
    let reasoning = block;
    if (reasoning === undefined) {
      reasoning = { kind: 'reasoning', signature: '' };
      state.blocks[index] = reasoning;
      parts.push({ type: 'reasoning-start', choiceIndex: 0 });
    }
    const { text, signature } = delta.reasoningContent;
    if (typeof text === 'string' && text.length > 0)
      parts.push({ type: 'reasoning-delta', choiceIndex: 0, delta: text });
    // Kept whole and handed on with the block's end: clients must send it back byte for byte.
    if (reasoning.kind === 'reasoning' && typeof signature === 'string') {
      reasoning.signature += signature;
      if (reasoning.signature.length > longestReasoningSignature) throw signatureTooLong('bedrock');
    }
    return parts;
  }
  const fragment = delta.toolUse?.input;
  if (typeof fragment !== 'string' || fragment.length === 0) return [];
  if (block?.kind === 'tool') {
    block.receivedInput = true;
    return [{ type: 'tool-input-delta', choiceIndex: 0, toolIndex: block.toolIndex, delta: fragment }];
  }
  if (block?.kind === 'json-answer') {
    block.receivedInput = true;
    return [{ type: 'text-delta', choiceIndex: 0, delta: fragment }];
  }
  return [];
}

function onContentBlockStop(state: BedrockStreamState, data: BedrockStreamEvent): CanonicalStreamPart[] {
  return closeContentBlock(
    typeof data.contentBlockIndex === 'number' ? state.blocks[data.contentBlockIndex] : undefined,
  );
}
