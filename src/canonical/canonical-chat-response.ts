import type { CanonicalToolCall } from './canonical-chat-request.ts';
import type { CanonicalUsage } from './canonical-usage.ts';

/**
 * Why a choice stopped, normalised, with the provider's own value kept beside it.
 * - `stop`: natural end or a stop sequence; `length`: max tokens; `tool-calls`: the model called tools;
 * - `content-filter`: refused or filtered; `error`: the provider reported an error; `other`: anything else.
 */
export interface CanonicalFinishReason {
  unified: 'stop' | 'length' | 'tool-calls' | 'content-filter' | 'error' | 'other';
  raw: string | undefined;
}

/** One choice of a non-streamed chat response. */
export interface CanonicalChoice {
  index: number;
  /** The assistant text, or null when the model only called tools. */
  text: string | null;
  /** Visible reasoning text where the provider returns it (Anthropic thinking, DeepSeek reasoning_content). */
  reasoning?: string;
  /**
   * The provider's signature over the reasoning (Anthropic thinking `signature`), opaque and returned byte for byte;
   * clients send it back with the reasoning in the next turn.
   */
  reasoningSignature?: string;
  refusal?: string | null;
  toolCalls: CanonicalToolCall[];
  finishReason: CanonicalFinishReason;
  /** Provider log probabilities, passed through as the provider shaped them (OpenAI shape where supported). */
  logprobs?: unknown;
}

/** A complete, non-streamed chat response in canonical form. */
export interface CanonicalChatResponse {
  id: string;
  /** The upstream model that answered. */
  model: string;
  /** Unix seconds. */
  created: number;
  choices: CanonicalChoice[];
  usage: CanonicalUsage | undefined;
  systemFingerprint?: string | null;
}
