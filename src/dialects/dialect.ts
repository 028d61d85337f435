import type { CanonicalChatFeature } from '../canonical/canonical-chat-request.ts';
import type { CanonicalStreamPart } from '../canonical/canonical-stream-part.ts';
import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import type { CancellableTransformer, StreamEnd } from '../framing/stream-end.ts';
import type { ClientDialectId, UpstreamTarget } from '../canonical/provider-translator.ts';
import type { ErrorDialect, GatewayError } from '../errors.ts';
import type { SecretRedactor } from '../security/secret-redactor.ts';

/** The facts about a parsed client request the pipeline needs before it routes. */
export interface ClientRequestSummary {
  /** The model group the client named. */
  model: string;
  stream: boolean;
  /** The most output tokens the client allows (0 when it set none), for the token-rate reservation. */
  maxOutputTokens: number;
}

/** What a dialect found in a same-dialect upstream answer it is about to relay unchanged. */
export type NativeAnswerCheck =
  | { ok: true; usage: CanonicalUsage | undefined }
  /** Not a usable answer: `reason` says why; `errorMessage` is the upstream's own message when it sent an error. */
  | { ok: false; reason: string; errorMessage?: string };

/** What a same-dialect stream tap needs besides the request. */
export interface NativeStreamTapOptions {
  /** The config's provider name, for the error event of a stream that ends early. */
  providerName: string;
  /** Applied to error events the upstream sends, which may quote the gateway's key. */
  redactor: SecretRedactor;
  /** Called once, when the stream is over, with the usage the tap read. */
  onEnd: StreamEnd;
}

/** What a translated stream's renderer knows besides the request. */
export interface StreamRendererContext {
  /** The model to name until the upstream names its own. */
  fallbackModel: string;
  /**
   * The gateway's estimate of the prompt's tokens, for a dialect that must report input usage before the upstream
   * has (Anthropic's `message_start`, when the upstream reports usage only at the end).
   */
  estimatedInputTokens: number;
}

/**
 * Renders canonical stream parts as the client's framed events (`data:` lines, with `event:` names where the dialect
 * has them). Stateful, one per stream.
 */
export interface StreamRenderer {
  /** The framed events one part becomes; '' when it becomes none (yet). */
  render(part: CanonicalStreamPart): string;
  /** The framed events that close a stream that ended without an error part (usage chunk, `[DONE]`, `message_stop`). */
  end(): string;
}

/**
 * A client API the gateway speaks (OpenAI chat, OpenAI embeddings, Anthropic Messages ...): how its requests are read
 * and checked, how they become the canonical form, and how answers, streams and errors are rendered back in it. The
 * one model-request pipeline (`handleModelRequest`) serves every dialect through this seam; nothing outside a
 * dialect's folder knows its wire format.
 *
 * `Request` is the dialect's validated request, `Canonical` and `Answer` the canonical request and response of the
 * operation it serves (see ModelOperation).
 *
 * @example
 * app.post('/v1/messages', handleModelRequest(modelRoute(dependencies, anthropicMessagesDialect, chatOperation)));
 */
export interface ClientDialect<Request, Canonical, Answer> {
  readonly id: ClientDialectId;
  /** The error envelope (and status conventions) of this client API. */
  readonly errorDialect: ErrorDialect;
  /** Validates a parsed JSON body; a violation throws a 400 GatewayError naming the parameter. */
  parseRequest(body: Record<string, unknown>): Request;
  summarize(request: Request): ClientRequestSummary;
  /** The dialect's own name for each optional canonical feature, for the 400 when a deployment lacks one. */
  readonly featureParameters: Readonly<Record<CanonicalChatFeature, string>>;
  /** The canonical request; absent for a dialect that is only ever passed through (legacy completions). */
  toCanonical?(request: Request): Canonical;
  /**
   * The protocol headers of the client's request forwarded to a same-dialect upstream (`anthropic-version`,
   * `anthropic-beta`); nothing else the client sends reaches an upstream.
   */
  readonly forwardedHeaders?: readonly string[];
  /** The body for a same-dialect upstream: the client's body with the gateway's edits (model name, usage request). */
  nativeBody(request: Request, body: Record<string, unknown>, target: UpstreamTarget): Record<string, unknown>;
  /**
   * The client's own JSON text, sent instead of `nativeBody` serialised again when both say the same: the body needs
   * no edit for `target`, and no key the gateway reads could read differently to another parser (see
   * verbatim-native-text.ts). Undefined otherwise; dialects without it always serialise.
   */
  nativeText?(
    request: Request,
    body: Record<string, unknown>,
    text: string,
    target: UpstreamTarget,
  ): string | undefined;
  /** Checks a same-dialect answer before its bytes are relayed unchanged, and reads its usage. */
  checkNativeAnswer(text: string): NativeAnswerCheck;
  /** The usage tap of a same-dialect stream: events pass through; usage, errors and a missing end are watched. */
  createNativeStreamTap?(
    request: Request,
    options: NativeStreamTapOptions,
  ): CancellableTransformer<Uint8Array, Uint8Array>;
  /** Renders a translated, complete answer as the response body (with `toCanonical`). */
  renderResponse?(answer: Answer, request: Request): string;
  /** A renderer for a translated stream. */
  createStreamRenderer?(request: Request, context: StreamRendererContext): StreamRenderer;
  /** The framed event that ends a stream with an error (the client's in-band error event). */
  renderStreamBreak(error: GatewayError): string;
}
