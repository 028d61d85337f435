/**
 * The gateway's own chat request: what every client dialect parses into and every provider translator builds
 * its upstream request from. It follows OpenAI chat semantics (the lingua franca of LLM clients) but with
 * named, typed fields instead of wire names, so translators never depend on a client dialect's spelling.
 */

/** One piece of message content. Images carry either an `https:` URL or a `data:` URL with base64 bytes. */
export type CanonicalContentPart =
  { type: 'text'; text: string } | { type: 'image'; url: string; detail?: 'auto' | 'low' | 'high' };

/** A tool call made by the assistant. `arguments` is the JSON text exactly as the model produced it. */
export interface CanonicalToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * One conversation turn. `system` covers OpenAI's `system` and `developer` roles; several system messages are
 * kept in order (a translator that has one system slot joins them).
 */
export type CanonicalMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: CanonicalContentPart[]; name?: string }
  | { role: 'assistant'; content: CanonicalContentPart[]; toolCalls: CanonicalToolCall[]; name?: string }
  | { role: 'tool'; toolCallId: string; content: string };

/** A function the model may call. `parameters` is a JSON Schema object. */
export interface CanonicalTool {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  strict?: boolean;
}

/** Whether and which tool the model must call. */
export type CanonicalToolChoice =
  { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'tool'; name: string };

/** The requested output format. */
export type CanonicalResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };

/** A chat request in canonical form. Absent optional fields mean "provider default". */
export interface CanonicalChatRequest {
  /** The model group the client asked for (not the upstream model name). */
  model: string;
  messages: CanonicalMessage[];
  stream: boolean;
  /** Whether the client wants usage reported in the stream (OpenAI `stream_options.include_usage`). */
  streamIncludeUsage: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  seed?: number;
  user?: string;
  /** Number of choices; translators whose upstream cannot produce several reject n > 1. */
  n?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  logprobs?: boolean;
  topLogprobs?: number;
  tools?: CanonicalTool[];
  toolChoice?: CanonicalToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: CanonicalResponseFormat;
  /** Reasoning effort for reasoning models (OpenAI `reasoning_effort`); `none` turns reasoning off where possible. */
  reasoningEffort?: 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';
}
