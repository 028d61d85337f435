import type { GatewayError } from '../errors.ts';
import type { DecodedStreamEvent } from '../framing/server-sent-event.ts';
import type { CanonicalChatFeature, CanonicalChatRequest } from './canonical-chat-request.ts';
import type { CanonicalChatResponse } from './canonical-chat-response.ts';
import type { CanonicalEmbeddingsRequest, CanonicalEmbeddingsResponse } from './canonical-embeddings.ts';
import type { CanonicalStreamPart } from './canonical-stream-part.ts';

/** The operations a provider can serve. */
export type ProviderOperation = 'chat' | 'embeddings';

/**
 * The client dialects the gateway speaks; a deployment that natively speaks one gets same-dialect pass-through.
 * `anthropic-count-tokens` is Messages' token-counting endpoint, passed through on its own; `openai-completions` is
 * OpenAI's legacy text completions, which the gateway only passes through (there is nothing to translate it to).
 */
export type ClientDialectId =
  | 'openai-chat'
  | 'openai-embeddings'
  | 'openai-responses'
  | 'openai-completions'
  | 'anthropic-messages'
  | 'anthropic-count-tokens';

/**
 * Where and how to call one deployment: resolved from the config (presets applied, env references
 * substituted) before it reaches a translator.
 */
export interface UpstreamTarget {
  /** The config's provider name (`openai`, `groq`, `anthropic` ...), for error messages and metrics. */
  providerName: string;
  /** Base URL without a trailing slash, e.g. `https://api.openai.com/v1`. */
  baseURL: string;
  /** The upstream's own model name. */
  model: string;
  apiKey: string | undefined;
  /** Extra headers the config adds to every upstream request. */
  headers: Record<string, string>;
  /** Provider-specific options from the config (e.g. Anthropic's `anthropic-version`), untyped here. */
  options: Record<string, unknown>;
}

/** A ready-to-send upstream HTTP request. The body is already serialised. */
export interface UpstreamRequest {
  url: string;
  method: 'POST' | 'GET' | 'DELETE';
  headers: Record<string, string>;
  body: string | undefined;
}

/**
 * A pure reducer over a provider's decoded stream events. `init` makes fresh per-stream state; `onEvent` and
 * `onEnd` mutate only that state and return the canonical parts the event produced (often none).
 * `onEvent` may throw a {@link GatewayError} for an error event the provider sent mid-stream.
 */
export interface ChatStreamReducer<State = unknown> {
  init(): State;
  onEvent(state: State, event: DecodedStreamEvent): CanonicalStreamPart[];
  /**
   * The stream is over. `ending.sentinel` says whether the framing's end sentinel came (OpenAI's `data: [DONE]`,
   * which the framing consumes, so reducers never see it as an event): a reducer for a provider that sends one
   * reports a stream without it as cut off.
   */
  onEnd(state: State, ending?: StreamEnding): CanonicalStreamPart[];
  /**
   * Whether the provider's own final event has come (Anthropic's `message_stop`): the gateway then ends the client's
   * stream (`onEnd` follows at once) instead of waiting for the upstream to close its body. Reducers of providers
   * whose end is the framing's sentinel (`data: [DONE]`) need not implement it; the sentinel does the same.
   */
  isComplete?(state: State): boolean;
}

/** How an upstream stream ended, as the shared framing saw it. */
export interface StreamEnding {
  /** Whether the end sentinel (`data: [DONE]`) came before the stream closed. */
  sentinel: boolean;
}

/**
 * The seam every upstream provider implements: four verbs (request, response, stream, error) per operation.
 * Translators are stateless and runtime-neutral: they build requests and read parsed bodies; the gateway does the
 * I/O, the framing (SSE, AWS event-stream) and the JSON parsing.
 */
export interface ProviderTranslator {
  /** Stable id, e.g. `openai-compatible`, `anthropic`. */
  readonly id: string;
  readonly operations: readonly ProviderOperation[];
  /** How the upstream frames its streams; the gateway decodes it before the reducer sees anything. */
  readonly streamFraming: 'sse' | 'aws-event-stream';
  /**
   * The client dialects this translator can pass through (build a native request for). Whether a deployment does is
   * decided by its preset and config (ProviderPreset.nativeDialects, a deployment's `nativeDialects`): OpenAI serves
   * every OpenAI dialect, while a vLLM server behind the same translator may serve chat only.
   */
  readonly nativeDialects: readonly ClientDialectId[];
  /**
   * The optional canonical features this translator carries to its upstream; a request using any other is answered
   * with a 400 naming the client's parameter before the translator sees it.
   */
  readonly chatFeatures: readonly CanonicalChatFeature[];
  /**
   * Builds the upstream request for a body already in one of `nativeDialects` (same-dialect pass-through). The
   * core has made its edits (upstream model name, `stream_options.include_usage`); the translator adds the URL,
   * credentials and headers. `clientHeaders` are the protocol headers the client sent that the dialect forwards
   * (`anthropic-version`, `anthropic-beta`); the config's headers still win over them. Required when `nativeDialects`
   * is not empty. May be async (a token fetch); the pipeline awaits only a promise. `bodyText`, when given, is the
   * client's own text and says exactly what `body` says (see ClientDialect.nativeText): a translator that sends
   * `body` unchanged sends it instead of serialising `body` again; one that edits `body` ignores it.
   */
  buildNativeRequest?(
    dialect: ClientDialectId,
    body: Record<string, unknown>,
    target: UpstreamTarget,
    clientHeaders?: Readonly<Record<string, string>>,
    bodyText?: string,
  ): UpstreamRequest | Promise<UpstreamRequest>;
  /** Builds the upstream chat request. May be async (request signing). Throws a 400 GatewayError for requests the upstream cannot express. */
  buildChatRequest(request: CanonicalChatRequest, target: UpstreamTarget): UpstreamRequest | Promise<UpstreamRequest>;
  /** Reads a parsed, successful, non-streamed chat response. */
  parseChatResponse(body: unknown): CanonicalChatResponse;
  /** The stream reducer for chat streams. */
  readonly chatStream: ChatStreamReducer<any>;
  buildEmbeddingsRequest?(
    request: CanonicalEmbeddingsRequest,
    target: UpstreamTarget,
  ): UpstreamRequest | Promise<UpstreamRequest>;
  parseEmbeddingsResponse?(body: unknown): CanonicalEmbeddingsResponse;
  /**
   * Checks a deployment's `options` at start (config resolution), so a bad value fails the start instead of every
   * request. Returns one problem per bad option, each `<option>: <reason>`; empty when they are fine.
   */
  validateOptions?(options: Record<string, unknown>): string[];
  /**
   * A cheap request that says whether a deployment answers at all, for the optional background health checks
   * (`healthCheck` in the config): a model list rather than a billed completion. Without it no check runs. May be
   * async (a token fetch); a failure to build it fails the check.
   */
  buildHealthCheckRequest?(target: UpstreamTarget): UpstreamRequest | Promise<UpstreamRequest>;
  /**
   * The upstream answered 401 to `request`: a translator that caches credentials (an OAuth access token) drops the
   * one that request carried, so the next request fetches a fresh one instead of sending a revoked token until it
   * would have expired. Called before `mapError`; it must not throw.
   */
  onCredentialsRejected?(request: UpstreamRequest, target: UpstreamTarget): void;
  /**
   * Maps an upstream error response to a GatewayError, keeping the upstream's message. `body` is the parsed JSON
   * when the body was JSON, otherwise its text.
   */
  mapError(status: number, body: unknown, headers: Headers): GatewayError;
}

/** Provider translators by id, plus config-only presets that reuse a translator with defaults. */
export interface ProviderRegistry {
  translators: Record<string, ProviderTranslator>;
  /** Preset name -> the translator it uses and its default base URL (e.g. `groq` -> openai-compatible). */
  presets: Record<string, ProviderPreset>;
}

/** A config-only provider entry: which translator, which base URL by default, and how the key is sent. */
export interface ProviderPreset {
  translator: string;
  baseURL: string | undefined;
  /** The environment variable conventionally holding this provider's key, for the embedded default config. */
  apiKeyEnvironmentVariable?: string;
  /** Whether the upstream needs no key (local servers such as Ollama and vLLM). */
  keyOptional?: boolean;
  /**
   * The client dialects this provider's API serves natively, passed through without translation; default: all of
   * the translator's `nativeDialects`. A deployment's config `nativeDialects` overrides it.
   */
  nativeDialects?: readonly ClientDialectId[];
  /** Provider options this preset's deployments get unless their config sets them (e.g. OpenAI's token field). */
  options?: Readonly<Record<string, unknown>>;
  /**
   * Options read from the environment when a deployment's config does not set them (Bedrock's `region` from
   * `AWS_REGION`): option name -> environment variable.
   */
  optionEnvironmentVariables?: Readonly<Record<string, string>>;
  /**
   * Credential options read from the environment, all together, for a deployment that sets no `apiKey` and none of
   * them itself (Bedrock's access key, secret and session token from `AWS_ACCESS_KEY_ID` ...).
   */
  credentialEnvironmentVariables?: Readonly<Record<string, string>>;
  /** Headers this preset's deployments send unless their config's `headers` sets the same name. */
  headers?: Readonly<Record<string, string>>;
  /**
   * The models the embedded default config serves from this provider (one model group each, named after the model)
   * when the preset's `apiKeyEnvironmentVariable` is set and no config file is given.
   */
  models?: readonly string[];
}
