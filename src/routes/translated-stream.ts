import type { CanonicalStreamPart } from '../canonical/canonical-stream-part.ts';
import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import type { ChatStreamReducer } from '../canonical/provider-translator.ts';
import type { StreamRenderer } from '../dialects/dialect.ts';
import { toGatewayError, type GatewayError } from '../errors.ts';
import {
  createSseEventDecoder,
  type StreamEventDecoder,
  type StreamEventItem,
} from '../framing/stream-event-decoder.ts';
import { once, type CancellableTransformer, type StreamEnd } from '../framing/stream-end.ts';
import { sanitizedUpstreamError } from '../security/sanitized-upstream-error.ts';
import { noSecretRedactor, type SecretRedactor } from '../security/secret-redactor.ts';

const textEncoder = new TextEncoder();

/** What a translated stream needs to know about its request. */
export interface TranslatedStreamOptions {
  /** The provider's stream reducer (decoded events -> canonical parts). */
  reducer: ChatStreamReducer;
  /** The client dialect's renderer (canonical parts -> framed events). */
  renderer: StreamRenderer;
  providerName: string;
  /** Decodes the upstream's framing (`openStreamEventDecoder` of the translator's `streamFraming`); default SSE. */
  decoder?: StreamEventDecoder;
  /** Applied to the messages of errors the upstream sends mid-stream, which may quote the gateway's key. */
  redactor?: SecretRedactor;
  onEnd: StreamEnd;
}

/**
 * Upstream stream bytes (SSE or the AWS event stream) -> decoded JSON events -> the provider's stream reducer -> canonical parts -> the client
 * dialect's framed events. An error the provider reports mid-stream (or a reducer or decoder failure) is rendered as
 * the dialect's in-band error event and ends the stream; the renderer renders nothing after it. The provider's final
 * event (the `[DONE]` sentinel, or what the reducer's `isComplete` says) ends the stream too, at once: the client
 * does not wait for the upstream to close its body, and nothing the upstream sends after it is rendered.
 */
export function createTranslatedStreamTransformer(
  options: TranslatedStreamOptions,
): CancellableTransformer<Uint8Array, Uint8Array> {
  const { reducer, renderer, providerName } = options;
  const decoder = options.decoder ?? createSseEventDecoder(providerName);
  const reducerState: unknown = reducer.init();
  const redactor = options.redactor ?? noSecretRedactor;
  let usage: CanonicalUsage | undefined;
  let failure: GatewayError | undefined;
  let sentinel = false;
  const finish = once((reason?: unknown) => options.onEnd(usage, failure ?? reason));

  const render = (parts: CanonicalStreamPart[]): string => {
    let output = '';
    for (let part of parts) {
      if (part.type === 'usage') usage = part.usage;
      if (part.type === 'error') {
        part = { type: 'error', error: sanitizedUpstreamError(part.error, providerName, redactor) };
        failure ??= part.error;
      }
      output += renderer.render(part);
    }
    return output;
  };

  /** The stream's end as the client sees it: the reducer's last parts and, unless it failed, the dialect's end. */
  const renderEnd = (): string => {
    const output = render(reducer.onEnd(reducerState, { sentinel }));
    return failure === undefined ? output + renderer.end() : output;
  };
  const complete = (): boolean => sentinel || reducer.isComplete?.(reducerState) === true;
  /** Renders one decoded item; answers whether the stream is over (the provider's end, or an error it reported). */
  const consume = (item: StreamEventItem, into: { output: string }): boolean => {
    if (item === 'end') sentinel = true;
    else into.output += render(reducer.onEvent(reducerState, item));
    return complete() || failure !== undefined;
  };

  const transformer: CancellableTransformer<Uint8Array, Uint8Array> = {
    transform(chunk, controller) {
      const into = { output: '' };
      let ended = false;
      try {
        for (const item of decoder.push(chunk)) {
          // The provider's final event, or an error it reported: the stream is over, and whatever the upstream sends
          // or does after it (more bytes, a connection held open, a reset) is not the client's concern.
          if (consume(item, into)) {
            into.output += renderEnd();
            ended = true;
            break;
          }
        }
      } catch (error) {
        into.output += render([{ type: 'error', error: toGatewayError(error) }]);
        ended = true;
      }
      const { output } = into;
      if (output.length > 0) controller.enqueue(textEncoder.encode(output));
      if (ended) {
        finish();
        controller.terminate();
      }
    },
    flush(controller) {
      const into = { output: '' };
      try {
        for (const item of decoder.end()) if (consume(item, into)) break;
        into.output += renderEnd();
      } catch (error) {
        into.output += render([{ type: 'error', error: toGatewayError(error) }]);
      }
      controller.enqueue(textEncoder.encode(into.output));
      finish();
    },
    cancel(reason) {
      finish(reason);
    },
  };
  return transformer;
}

/** The same transformation as a TransformStream (for `pipeThrough`). */
export function createTranslatedStream(options: TranslatedStreamOptions): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream<Uint8Array, Uint8Array>(createTranslatedStreamTransformer(options));
}
