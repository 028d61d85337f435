/**
 * The gateway's own chat request: what every client dialect parses into and every provider translator builds
 * its upstream request from. It follows OpenAI chat semantics (the lingua franca of LLM clients) but with
 * named, typed fields instead of wire names, so translators never depend on a client dialect's spelling.
 */

/**
 * One piece of message content. Images carry either an `https:` URL or a `data:` URL with base64 bytes. A file
 * (a PDF or another document) carries its bytes as base64 `data` or an `https:` `url`; translators whose upstream
 * cannot take files leave the `files` feature out of their declaration (see ProviderTranslator.chatFeatures).
 */
export type CanonicalContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; url: string; detail?: 'auto' | 'low' | 'high' }
  | { type: 'file'; mediaType: string; data?: string; url?: string; filename?: string };

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

/**
 * A document the model may ground its answer in and cite (retrieval-augmented generation: Cohere's `documents`):
 * its fields (`title`, `snippet`, `text` ...) as the client gave them, and an id citations can name.
 */
export interface CanonicalDocument {
  id?: string;
  data: Record<string, unknown>;
}

/** A chat request in canonical form. Absent optional fields mean "provider default". */
export interface CanonicalChatRequest {
  /** The model group the client asked for (not the upstream model name). */
  model: string;
  messages: CanonicalMessage[];
  stream: boolean;
  /** Whether the client wants usage reported in the stream (OpenAI `stream_options.include_usage`). */
  streamIncludeUsage: boolean;
  /** Documents to ground the answer in (the `documents` feature). */
  documents?: CanonicalDocument[];
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
  /**
   * An explicit reasoning budget in tokens (Anthropic `thinking.budget_tokens`), beside the effort it was mapped to:
   * a translator whose upstream takes a budget uses it, the others use `reasoningEffort`.
   */
  reasoningBudgetTokens?: number;
}

/**
 * The optional canonical features a translator may or may not carry to its upstream. The pipeline checks a request
 * against the translator's declaration (ProviderTranslator.chatFeatures) and answers an unsupported one with one 400
 * naming the client's own parameter, so a new canonical field costs one edit here, not one per translator. Sampling
 * hints an upstream may ignore (`seed`, the penalties) are not features: translators drop what their upstream lacks.
 */
export type CanonicalChatFeature =
  'n' | 'logprobs' | 'top-k' | 'files' | 'images' | 'json-schema' | 'tools' | 'reasoning' | 'documents';
