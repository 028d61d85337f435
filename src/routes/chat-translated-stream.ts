import type { CanonicalStreamPart } from '../canonical/canonical-stream-part.ts';
import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import type { ProviderTranslator } from '../canonical/provider-translator.ts';
import {
  createOpenAIChunkRendererState,
  renderOpenAIStreamEnd,
  renderOpenAIStreamPart,
} from '../dialects/openai-chat/openai-chat-render-stream.ts';
import { toGatewayError, type GatewayError } from '../errors.ts';
import { decodeJsonEvent } from '../framing/decode-json-events.ts';
import { SseDecoder } from '../framing/sse-decoder.ts';
import { noSecretRedactor, type SecretRedactor } from '../security/secret-redactor.ts';
import { sanitizedUpstreamError } from './call-upstream.ts';
import { once, type CancellableTransformer, type StreamEnd } from './stream-response.ts';

const textEncoder = new TextEncoder();

/** What a translated stream needs to know about its request. */
export interface TranslatedStreamOptions {
  translator: ProviderTranslator;
  providerName: string;
  /** Whether the client asked for usage in the stream. */
  includeUsage: boolean;
  /** Model name to report until the upstream names its own. */
  fallbackModel: string;
  /** Applied to the messages of errors the upstream sends mid-stream, which may quote the gateway's key. */
  redactor?: SecretRedactor;
  onEnd: StreamEnd;
}

/**
 * Upstream SSE bytes -> decoded JSON events -> the provider's stream reducer -> canonical parts -> OpenAI
 * `chat.completion.chunk` events. An error the provider reports mid-stream is sent as an OpenAI error event and
 * ends the stream.
 */
export function createTranslatedChatTransformer(
  options: TranslatedStreamOptions,
): CancellableTransformer<Uint8Array, Uint8Array> {
  const { translator, providerName } = options;
  const decoder = new SseDecoder();
  const textDecoder = new TextDecoder();
  const reducer = translator.chatStream;
  const reducerState: unknown = reducer.init();
  const renderer = createOpenAIChunkRendererState(options.includeUsage, options.fallbackModel);
  const redactor = options.redactor ?? noSecretRedactor;
  let usage: CanonicalUsage | undefined;
  let failure: GatewayError | undefined;
  const finish = once((reason?: unknown) => options.onEnd(usage, failure ?? reason));

  const render = (parts: CanonicalStreamPart[]): string => {
    let output = '';
    for (let part of parts) {
      if (part.type === 'usage') usage = part.usage;
      if (part.type === 'error') {
        part = { type: 'error', error: sanitizedUpstreamError(part.error, providerName, redactor) };
        failure ??= part.error;
      }
      for (const payload of renderOpenAIStreamPart(renderer, part)) output += `data: ${payload}\n\n`;
    }
    return output;
  };

  const transformer: CancellableTransformer<Uint8Array, Uint8Array> = {
    transform(chunk, controller) {
      let output = '';
      try {
        for (const event of decoder.push(textDecoder.decode(chunk, { stream: true }))) {
          const decoded = decodeJsonEvent(event, providerName);
          if (decoded !== undefined) output += render(reducer.onEvent(reducerState, decoded));
        }
      } catch (error) {
        output += render([{ type: 'error', error: toGatewayError(error) }]);
        controller.enqueue(textEncoder.encode(output));
        finish();
        controller.terminate();
        return;
      }
      if (output.length > 0) controller.enqueue(textEncoder.encode(output));
    },
    flush(controller) {
      let output = '';
      try {
        for (const event of [...decoder.push(textDecoder.decode()), ...decoder.end()]) {
          const decoded = decodeJsonEvent(event, providerName);
          if (decoded !== undefined) output += render(reducer.onEvent(reducerState, decoded));
        }
        output += render(reducer.onEnd(reducerState));
        for (const payload of renderOpenAIStreamEnd(renderer)) output += `data: ${payload}\n\n`;
        // Like OpenAI, a stream that ended in an error event gets no [DONE] after it.
        if (failure === undefined) output += 'data: [DONE]\n\n';
      } catch (error) {
        output += render([{ type: 'error', error: toGatewayError(error) }]);
      }
      controller.enqueue(textEncoder.encode(output));
      finish();
    },
    cancel(reason) {
      finish(reason);
    },
  };
  return transformer;
}

/** The same transformation as a TransformStream (for `pipeThrough`). */
export function createTranslatedChatStream(options: TranslatedStreamOptions): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream<Uint8Array, Uint8Array>(createTranslatedChatTransformer(options));
}
