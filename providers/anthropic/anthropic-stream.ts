import * as z from 'zod/mini';
import type { CanonicalStreamPart, ChatStreamReducer } from '../../src/canonical/index.ts';
import { GatewayError } from '../../src/errors.ts';
import type { DecodedStreamEvent } from '../../src/framing/index.ts';
import { mapAnthropicStreamError } from './anthropic-error.ts';
import { mapAnthropicFinishReason } from './anthropic-finish-reason.ts';
import { jsonResponseToolName } from './anthropic-json-response.ts';
import {
  anthropicUsageSchema,
  mergeAnthropicUsage,
  toCanonicalUsage,
} from '../../src/canonical/wire/anthropic-wire-usage.ts';

/**
 * A reasoning signature is a few hundred bytes to a few KB; one growing past this is a broken or hostile stream, not
 * held in memory for as long as the upstream keeps sending.
 */
export const longestReasoningSignature = 64 * 1024;

/** The error for a stream whose reasoning signature passed {@link longestReasoningSignature}. */
export function signatureTooLong(provider: string): GatewayError {
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_invalid_stream',
    provider,
    retryable: true,
    message: `Upstream ${provider} sent a reasoning signature longer than ${longestReasoningSignature} characters.`,
  });
}

/** One event of Anthropic's Messages stream: only the fields the reducer reads, all but `type` optional. */
const anthropicStreamEventSchema = z.object({
  type: z.nullish(z.string()),
  index: z.nullish(z.number()),
  message: z.nullish(z.object({ id: z.string(), model: z.string(), usage: z.nullish(anthropicUsageSchema) })),
  content_block: z.nullish(
    z.object({
      type: z.string(),
      id: z.nullish(z.string()),
      name: z.nullish(z.string()),
      text: z.nullish(z.string()),
      thinking: z.nullish(z.string()),
    }),
  ),
  delta: z.nullish(
    z.object({
      type: z.nullish(z.string()),
      text: z.nullish(z.string()),
      partial_json: z.nullish(z.string()),
      thinking: z.nullish(z.string()),
      signature: z.nullish(z.string()),
      stop_reason: z.nullish(z.string()),
    }),
  ),
  usage: z.nullish(anthropicUsageSchema),
});

type AnthropicStreamEvent = z.infer<typeof anthropicStreamEventSchema>;

/** What one content block (by Anthropic's block `index`) turns into. */
/**
 * One open content block of a block-structured stream (Anthropic's, and Bedrock's ConverseStream, which has the same
 * blocks): what its end must emit.
 */
export type ContentBlockState =
  | { kind: 'text' }
  | { kind: 'reasoning'; signature: string }
  | { kind: 'tool'; toolIndex: number; receivedInput: boolean }
  | { kind: 'json-answer'; receivedInput: boolean }
  | { kind: 'ignored' };

/** Per-stream state of {@link anthropicChatStream}. */
export interface AnthropicStreamState {
  /** Content blocks seen so far, by Anthropic's block index. */
  blocks: Record<number, ContentBlockState>;
  /** Client tool calls seen so far; the next one gets this as its `toolIndex`. */
  toolCount: number;
  answeredWithJsonTool: boolean;
  started: boolean;
  /** Whether `message_delta` (the stop reason) came. */
  finished: boolean;
  /** Whether `message_stop`, the stream's last event, came. */
  stopped: boolean;
  /** Anthropic's raw usage objects from `message_start` and `message_delta`, merged. */
  usage: Record<string, unknown> | undefined;
  usageEmitted: boolean;
}

/**
 * The reducer over Anthropic's Messages stream (one choice, index 0):
 * - `message_start` -> `response-start`, and a first `usage` part with the prompt's tokens when it reports them;
 * - block boundaries -> `text-start`/`-end`, `reasoning-start`/`-end` (carrying the block's `signature_delta`s, joined)
 *   and `tool-input-end`;
 * - `content_block_start`: a `tool_use` block -> `tool-input-start`, its `toolIndex` counted among tool blocks only;
 *   text and thinking blocks produce nothing unless they start with text;
 * - `content_block_delta`: `text_delta` -> `text-delta`, `thinking_delta` -> `reasoning-delta`, `input_json_delta` ->
 *   `tool-input-delta` (empty fragments dropped; a tool call that streamed no input gets `{}` at its
 *   `content_block_stop`, so its arguments are valid JSON as in the non-streamed response);
 * - the gateway's JSON response tool streams as `text-delta`s (see `anthropic-json-response.ts`);
 * - `message_delta` -> `finish` (and the cumulative output usage); `message_stop` -> the one `usage` part;
 * - `ping`, `citations_delta` and unknown events are ignored; an `error` event is thrown as the
 *   {@link GatewayError} its error type maps to (`overloaded_error` -> 503, ...).
 *
 * `onEnd` flushes usage if `message_stop` never came, and reports a stream that ended without `message_stop` as an
 * `error` part (502 `upstream_stream_incomplete`): the answer was cut off, or at best its end was not confirmed.
 */
export const anthropicChatStream: ChatStreamReducer<AnthropicStreamState> = {
  init(): AnthropicStreamState {
    return {
      blocks: {},
      toolCount: 0,
      answeredWithJsonTool: false,
      started: false,
      finished: false,
      stopped: false,
      usage: undefined,
      usageEmitted: false,
    };
  },

  onEvent(state: AnthropicStreamState, event: DecodedStreamEvent): CanonicalStreamPart[] {
    const data = readEvent(event);
    switch (data.type ?? event.type) {
      case 'message_start':
        return onMessageStart(state, data, event.data as { message: { usage?: Record<string, unknown> } });
      case 'content_block_start':
        return onContentBlockStart(state, data);
      case 'content_block_delta':
        return onContentBlockDelta(state, data);
      case 'content_block_stop':
        return onContentBlockStop(state, data);
      case 'message_delta':
        return onMessageDelta(state, data, event.data as { usage?: Record<string, unknown> });
      case 'message_stop':
        state.stopped = true;
        return flushUsage(state);
      case 'error':
        throw mapAnthropicStreamError(event.data);
      default:
        return [];
    }
  },

  isComplete(state: AnthropicStreamState): boolean {
    return state.stopped;
  },
  onEnd(state: AnthropicStreamState): CanonicalStreamPart[] {
    const parts = flushUsage(state);
    if (!state.stopped) {
      const error = new GatewayError({
        status: 502,
        type: 'upstream_error',
        code: 'upstream_stream_incomplete',
        provider: 'anthropic',
        retryable: !state.started,
        message: state.finished
          ? 'The Anthropic stream ended without its final message_stop event; the answer may be incomplete.'
          : 'The Anthropic stream ended before the message was complete.',
      });
      parts.push({ type: 'error', error });
      state.stopped = true;
    }
    return parts;
  },
};

function readEvent(event: DecodedStreamEvent): AnthropicStreamEvent {
  const parsed = anthropicStreamEventSchema.safeParse(event.data);
  if (parsed.success) return parsed.data;
  const fields = parsed.error.issues.map((issue) => issue.path.join('.') || '(root)').join(', ');
  throw invalidStream(`Anthropic sent a stream event the gateway cannot read (invalid: ${fields}).`, event.data);
}

function invalidStream(message: string, upstreamBody: unknown): GatewayError {
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_invalid_stream',
    provider: 'anthropic',
    message,
    upstreamBody,
  });
}

function onMessageStart(
  state: AnthropicStreamState,
  data: AnthropicStreamEvent,
  raw: { message: { usage?: Record<string, unknown> } },
): CanonicalStreamPart[] {
  if (state.started) return [];
  if (data.message === null || data.message === undefined)
    throw invalidStream('Anthropic sent message_start without a message.', data);
  state.started = true;
  const parts: CanonicalStreamPart[] = [
    { type: 'response-start', id: data.message.id, model: data.message.model, created: Math.floor(Date.now() / 1000) },
  ];
  if (data.message.usage !== null && data.message.usage !== undefined && raw.message.usage !== undefined) {
    state.usage = mergeAnthropicUsage(state.usage, raw.message.usage);
    // The prompt's tokens, known up front: a renderer that reports them at the start (Anthropic's own) gets them.
    parts.push({ type: 'usage', usage: currentUsage(state.usage) });
  }
  return parts;
}

function onContentBlockStart(state: AnthropicStreamState, data: AnthropicStreamEvent): CanonicalStreamPart[] {
  const block = data.content_block;
  if (typeof data.index !== 'number' || block === null || block === undefined) {
    throw invalidStream('Anthropic sent content_block_start without an index or block.', data);
  }
  switch (block.type) {
    case 'text':
      state.blocks[data.index] = { kind: 'text' };
      return typeof block.text === 'string' && block.text.length > 0
        ? [
            { type: 'text-start', choiceIndex: 0 },
            { type: 'text-delta', choiceIndex: 0, delta: block.text },
          ]
        : [{ type: 'text-start', choiceIndex: 0 }];
    case 'thinking':
      state.blocks[data.index] = { kind: 'reasoning', signature: '' };
      return typeof block.thinking === 'string' && block.thinking.length > 0
        ? [
            { type: 'reasoning-start', choiceIndex: 0 },
            { type: 'reasoning-delta', choiceIndex: 0, delta: block.thinking },
          ]
        : [{ type: 'reasoning-start', choiceIndex: 0 }];
    case 'tool_use': {
      if (block.name === jsonResponseToolName) {
        state.blocks[data.index] = { kind: 'json-answer', receivedInput: false };
        state.answeredWithJsonTool = true;
        return [];
      }
      if (typeof block.id !== 'string' || typeof block.name !== 'string') {
        throw invalidStream('Anthropic sent a tool_use block without an id or name.', data);
      }
      const toolIndex = state.toolCount++;
      state.blocks[data.index] = { kind: 'tool', toolIndex, receivedInput: false };
      return [{ type: 'tool-input-start', choiceIndex: 0, toolIndex, id: block.id, name: block.name }];
    }
    default:
      state.blocks[data.index] = { kind: 'ignored' };
      return [];
  }
}

function onContentBlockDelta(state: AnthropicStreamState, data: AnthropicStreamEvent): CanonicalStreamPart[] {
  const delta = data.delta;
  if (delta === null || delta === undefined) return [];
  const block = typeof data.index === 'number' ? state.blocks[data.index] : undefined;
  switch (delta.type) {
    case 'text_delta':
      return typeof delta.text === 'string' && delta.text.length > 0
        ? [{ type: 'text-delta', choiceIndex: 0, delta: delta.text }]
        : [];
    case 'thinking_delta':
      return typeof delta.thinking === 'string' && delta.thinking.length > 0
        ? [{ type: 'reasoning-delta', choiceIndex: 0, delta: delta.thinking }]
        : [];
    case 'signature_delta':
      // Kept whole and handed on with the block's end: clients must send it back byte for byte.
      if (block?.kind === 'reasoning' && typeof delta.signature === 'string') {
        block.signature += delta.signature;
        if (block.signature.length > longestReasoningSignature) throw signatureTooLong('anthropic');
      }
      return [];
    case 'input_json_delta': {
      const fragment = delta.partial_json;
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
    default:
      return [];
  }
}

function onContentBlockStop(state: AnthropicStreamState, data: AnthropicStreamEvent): CanonicalStreamPart[] {
  return closeContentBlock(typeof data.index === 'number' ? state.blocks[data.index] : undefined);
}

/**
 * The parts a content block's end emits: the end of its text or reasoning (with the reasoning's signature), or of
 * its tool input; a tool (or forced JSON answer) that streamed no input gets `{}`, so a client never holds an empty
 * argument string.
 */
export function closeContentBlock(block: ContentBlockState | undefined): CanonicalStreamPart[] {
  switch (block?.kind) {
    case 'text':
      return [{ type: 'text-end', choiceIndex: 0 }];
    case 'reasoning':
      return [
        block.signature.length > 0
          ? { type: 'reasoning-end', choiceIndex: 0, signature: block.signature }
          : { type: 'reasoning-end', choiceIndex: 0 },
      ];
    case 'tool': {
      const end: CanonicalStreamPart = { type: 'tool-input-end', choiceIndex: 0, toolIndex: block.toolIndex };
      if (block.receivedInput) return [end];
      block.receivedInput = true;
      return [{ type: 'tool-input-delta', choiceIndex: 0, toolIndex: block.toolIndex, delta: '{}' }, end];
    }
    case 'json-answer':
      if (block.receivedInput) return [];
      block.receivedInput = true;
      return [{ type: 'text-delta', choiceIndex: 0, delta: '{}' }];
    default:
      return [];
  }
}

function onMessageDelta(
  state: AnthropicStreamState,
  data: AnthropicStreamEvent,
  raw: { usage?: Record<string, unknown> },
): CanonicalStreamPart[] {
  if (data.usage !== null && data.usage !== undefined && raw.usage !== undefined) {
    state.usage = mergeAnthropicUsage(state.usage, raw.usage);
  }
  const stopReason = data.delta?.stop_reason;
  if (stopReason === null || stopReason === undefined || state.finished) return [];
  state.finished = true;
  const finishReason = mapAnthropicFinishReason(stopReason, state.answeredWithJsonTool && state.toolCount === 0);
  return [{ type: 'finish', choiceIndex: 0, finishReason }];
}

function flushUsage(state: AnthropicStreamState): CanonicalStreamPart[] {
  if (state.usage === undefined || state.usageEmitted) return [];
  state.usageEmitted = true;
  return [{ type: 'usage', usage: currentUsage(state.usage) }];
}

function currentUsage(usage: Record<string, unknown>) {
  // Every piece passed the usage schema and merging keeps only non-null values, so the merged object passes too.
  return toCanonicalUsage(anthropicUsageSchema.parse(usage), usage);
}
