import type { CanonicalStreamPart, CanonicalUsage, ChatStreamReducer } from '../../src/canonical/index.ts';
import { GatewayError } from '../../src/errors.ts';
import type { UpstreamErrorMapper } from '../../src/errors/upstream-error-mapping.ts';
import type { DecodedStreamEvent } from '../../src/framing/index.ts';
import { geminiErrorMapper } from './gemini-error.ts';
import { blockedPromptFinishReason, mapGeminiFinishReason } from './gemini-finish-reason.ts';
import { unnamedGeminiModel } from './gemini-response.ts';
import { encodeToolCallId } from './gemini-tool-call-id.ts';
import {
  geminiGenerateContentResponseSchema,
  invalidFields,
  toCanonicalGeminiUsage,
  type GeminiGenerateContentResponse,
} from './gemini-wire-response.ts';

/** What the reducer knows of one candidate (one choice) so far. */
interface GeminiStreamCandidate {
  toolCount: number;
  /** Whether reasoning deltas were sent and no other kind has followed yet. */
  reasoningOpen: boolean;
  /** The signature of the open reasoning's thought parts, sent with its `reasoning-end`. */
  reasoningSignature: string | undefined;
  finished: boolean;
}

/** Per-stream state of a Gemini stream reducer. */
export interface GeminiStreamState {
  started: boolean;
  responseId: string | undefined;
  candidates: Record<number, GeminiStreamCandidate>;
  /** The latest usage (each chunk's `usageMetadata` is cumulative). */
  usage: CanonicalUsage | undefined;
  usageEmitted: boolean;
}

/**
 * Creates the reducer over Gemini's `streamGenerateContent?alt=sse` stream for a provider id (the Gemini API's is
 * {@link geminiChatStream}; Vertex AI's stream is the same, with its own error mapper). Each SSE `data:` is a whole
 * GenerateContentResponse chunk; there are no event names and no end sentinel, the stream simply closes.
 *
 * - The first chunk gives `response-start` (id `responseId`, model `modelVersion`).
 * - Per candidate (choice `candidate.index`): text parts -> `text-delta`; `thought: true` parts -> `reasoning-delta`,
 *   followed by `reasoning-end` (with the thought parts' signature, if any) when another kind of part or the finish
 *   follows; `functionCall` parts arrive whole, each -> `tool-input-start`, one `tool-input-delta` with
 *   `JSON.stringify(args)`, `tool-input-end`, with ids as in the non-streamed response (see `gemini-tool-call-id.ts`).
 * - `finishReason` -> `finish` (a candidate that called functions finishing with `STOP` is `tool-calls`).
 * - `usageMetadata` is remembered (the last is cumulative) and sent once as `usage` when the stream ends.
 * - A chunk with `promptFeedback.blockReason` and no candidates: `finish` content-filter on choice 0 (see
 *   `blockedPromptFinishReason`).
 * - A chunk that is Google's error envelope (`{error: {...}}`) is thrown as the GatewayError it maps to.
 *
 * `onEnd` sends the usage and reports a stream that ended before every started candidate finished (or without any
 * candidate or block reason) as an `error` part, 502 `upstream_stream_incomplete`.
 *
 * @example
 * const vertexChatStream = createGeminiChatStream('vertex', vertexErrorMapper);
 */
export function createGeminiChatStream(
  provider: string,
  errorMapper: UpstreamErrorMapper,
): ChatStreamReducer<GeminiStreamState> {
  return {
    init(): GeminiStreamState {
      return { started: false, responseId: undefined, candidates: {}, usage: undefined, usageEmitted: false };
    },

    onEvent(state: GeminiStreamState, event: DecodedStreamEvent): CanonicalStreamPart[] {
      const data = event.data;
      if (typeof data === 'object' && data !== null && 'error' in data) throw errorMapper.mapInBand(data);
      const parsed = geminiGenerateContentResponseSchema.safeParse(data);
      if (!parsed.success) {
        throw new GatewayError({
          status: 502,
          type: 'upstream_error',
          code: 'upstream_invalid_stream',
          provider,
          upstreamBody: data,
          message: `Gemini sent a stream chunk the gateway cannot read (invalid: ${invalidFields(parsed.error)}).`,
        });
      }
      return onChunk(state, parsed.data, (data as { usageMetadata?: unknown }).usageMetadata);
    },

    onEnd(state: GeminiStreamState): CanonicalStreamPart[] {
      const parts: CanonicalStreamPart[] = [];
      for (const [index, candidate] of Object.entries(state.candidates)) {
        if (!candidate.finished) parts.push(...closeReasoning(candidate, Number(index)));
      }
      if (state.usage !== undefined && !state.usageEmitted) {
        state.usageEmitted = true;
        parts.push({ type: 'usage', usage: state.usage });
      }
      const candidates = Object.values(state.candidates);
      const unfinished = candidates.length === 0 || candidates.some((candidate) => !candidate.finished);
      if (!state.started || unfinished) {
        parts.push({
          type: 'error',
          error: new GatewayError({
            status: 502,
            type: 'upstream_error',
            code: 'upstream_stream_incomplete',
            provider,
            retryable: !state.started,
            message: state.started
              ? 'The Gemini stream ended before the answer finished; it may be incomplete.'
              : 'The Gemini stream ended without any answer.',
          }),
        });
        for (const candidate of candidates) candidate.finished = true;
        if (candidates.length === 0) candidateState(state, 0).finished = true;
        state.started = true;
      }
      return parts;
    },
  };
}

/**
 * The reducer of the Gemini API's stream (see {@link createGeminiChatStream}).
 *
 * @example
 * const state = geminiChatStream.init();
 * const parts = geminiChatStream.onEvent(state, { type: undefined, data: chunk });
 */
export const geminiChatStream: ChatStreamReducer<GeminiStreamState> = createGeminiChatStream(
  'gemini',
  geminiErrorMapper,
);

function onChunk(
  state: GeminiStreamState,
  chunk: GeminiGenerateContentResponse,
  rawUsage: unknown,
): CanonicalStreamPart[] {
  const parts: CanonicalStreamPart[] = [];
  if (!state.started) {
    state.started = true;
    state.responseId = chunk.responseId ?? undefined;
    parts.push({
      type: 'response-start',
      id: chunk.responseId ?? `gemini-${crypto.randomUUID()}`,
      model: chunk.modelVersion ?? unnamedGeminiModel,
      created: Math.floor(Date.now() / 1000),
    });
  }
  if (chunk.usageMetadata !== null && chunk.usageMetadata !== undefined) {
    state.usage = toCanonicalGeminiUsage(chunk.usageMetadata, rawUsage);
  }
  const candidates = chunk.candidates ?? [];
  const blockReason = chunk.promptFeedback?.blockReason;
  if (candidates.length === 0 && blockReason !== null && blockReason !== undefined) {
    const candidate = candidateState(state, 0);
    if (!candidate.finished) {
      candidate.finished = true;
      parts.push({ type: 'finish', choiceIndex: 0, finishReason: blockedPromptFinishReason(blockReason) });
    }
    return parts;
  }
  candidates.forEach((candidate, position) => {
    const choiceIndex = candidate.index ?? position;
    const current = candidateState(state, choiceIndex);
    if (current.finished) return;
    for (const part of candidate.content?.parts ?? []) {
      const signature = part.thoughtSignature ?? undefined;
      if (part.functionCall !== null && part.functionCall !== undefined) {
        parts.push(...closeReasoning(current, choiceIndex));
        const toolIndex = current.toolCount++;
        const id = encodeToolCallId({
          geminiId: part.functionCall.id ?? undefined,
          responseId: state.responseId,
          candidateIndex: choiceIndex,
          callIndex: toolIndex,
          thoughtSignature: signature,
        });
        parts.push(
          { type: 'tool-input-start', choiceIndex, toolIndex, id, name: part.functionCall.name },
          { type: 'tool-input-delta', choiceIndex, toolIndex, delta: JSON.stringify(part.functionCall.args ?? {}) },
          { type: 'tool-input-end', choiceIndex, toolIndex },
        );
      } else if (part.thought === true) {
        if (typeof part.text === 'string' && part.text.length > 0) {
          current.reasoningOpen = true;
          parts.push({ type: 'reasoning-delta', choiceIndex, delta: part.text });
        }
        if (signature !== undefined && signature.length > 0) current.reasoningSignature = signature;
      } else if (typeof part.text === 'string' && part.text.length > 0) {
        parts.push(...closeReasoning(current, choiceIndex));
        parts.push({ type: 'text-delta', choiceIndex, delta: part.text });
      }
    }
    const finishReason = candidate.finishReason ?? undefined;
    if (finishReason !== undefined) {
      parts.push(...closeReasoning(current, choiceIndex));
      current.finished = true;
      parts.push({
        type: 'finish',
        choiceIndex,
        finishReason: mapGeminiFinishReason(finishReason, current.toolCount > 0),
      });
    }
  });
  return parts;
}

function candidateState(state: GeminiStreamState, index: number): GeminiStreamCandidate {
  const existing = state.candidates[index];
  if (existing !== undefined) return existing;
  const created: GeminiStreamCandidate = {
    toolCount: 0,
    reasoningOpen: false,
    reasoningSignature: undefined,
    finished: false,
  };
  state.candidates[index] = created;
  return created;
}

/** Ends an open reasoning block, handing on its signature. */
function closeReasoning(candidate: GeminiStreamCandidate, choiceIndex: number): CanonicalStreamPart[] {
  if (!candidate.reasoningOpen) return [];
  candidate.reasoningOpen = false;
  const signature = candidate.reasoningSignature;
  candidate.reasoningSignature = undefined;
  return [
    signature === undefined
      ? { type: 'reasoning-end', choiceIndex }
      : { type: 'reasoning-end', choiceIndex, signature },
  ];
}
