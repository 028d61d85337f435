import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';
import { usageFromOpenAIWire } from './openai-usage-from-wire.ts';
import { GatewayError, openAIErrorBody, toGatewayError, upstreamError } from '../../errors.ts';
import { parseJson } from '../../framing/parse-json.ts';
import { SseDecoder } from '../../framing/sse-decoder.ts';
import type { ServerSentEvent } from '../../framing/server-sent-event.ts';
import { noSecretRedactor, type SecretRedactor } from '../../security/secret-redactor.ts';
import { sanitizedUpstreamError } from '../../security/sanitized-upstream-error.ts';
import { once, type CancellableTransformer, type StreamEnd } from '../../framing/stream-end.ts';

const textEncoder = new TextEncoder();
/** OpenAI's mid-stream error event: `data: {"error":{...}}`. */
const upstreamErrorEvent = /^\s*\{\s*"error"\s*:/;

function mentionsUsage(data: string): boolean {
  const at = data.indexOf('"usage"');
  if (at === -1) return false;
  let index = at + 7;
  while (data.charCodeAt(index) === 32 || data.charCodeAt(index) === 58 /* ':' */) index++;
  return data.charCodeAt(index) === 123; /* '{' */
}

/** What a same-dialect (OpenAI) stream needs to know about its request. */
export interface OpenAIPassthroughOptions {
  /** Whether the client asked for `stream_options.include_usage`. */
  clientWantsUsage: boolean;
  /** The config's provider name, for the error event of a stream that ends early. */
  providerName: string;
  /** Applied to error events the upstream sends, which may quote the gateway's key. */
  redactor?: SecretRedactor;
  /** The longest event (line or data) held before the stream ends with an error; default the decoder's 16 MiB. */
  maxEventLength?: number;
  onEnd: StreamEnd;
}

/** The error a pass-through stream ends with when the upstream stops without OpenAI's final `data: [DONE]`. */
function incompleteStream(providerName: string): GatewayError {
  return upstreamError(
    'upstream_stream_incomplete',
    providerName,
    `The upstream ${providerName} stream ended without its final [DONE] event; the answer may be incomplete.`,
    { retryable: true },
  );
}

/** The error recorded for a stream in which the upstream itself sent an error event. */
function upstreamStreamError(providerName: string): GatewayError {
  return upstreamError(
    'upstream_stream_error',
    providerName,
    `The upstream ${providerName} sent an error in its stream.`,
  );
}

/**
 * The usage tap of a same-dialect (OpenAI) stream: events go through untouched, except the usage the gateway asked
 * for on the client's behalf. The upstream was asked for `stream_options.include_usage`; when the client did not
 * ask, the usage-only chunk is removed (and `usage` is deleted from a content chunk that carries it).
 * Only chunks that mention a usage object are parsed; the rest are re-framed as they came.
 *
 * The upstream is not trusted to end well: an error event it sends is relayed with the gateway's secrets redacted,
 * and a stream that ends without `data: [DONE]` (cut off, or not an event stream at all) gets a final error event,
 * so the client never mistakes a truncated answer for a complete one.
 */
export function createOpenAIPassthroughTransformer(
  options: OpenAIPassthroughOptions,
): CancellableTransformer<Uint8Array, Uint8Array> {
  const { clientWantsUsage, providerName } = options;
  const redactor = options.redactor ?? noSecretRedactor;
  const decoder = new SseDecoder(options.maxEventLength === undefined ? {} : { maxLineLength: options.maxEventLength });
  const textDecoder = new TextDecoder();
  let usage: CanonicalUsage | undefined;
  let done = false;
  let failure: GatewayError | undefined;
  const finish = once((reason?: unknown) => options.onEnd(usage, failure ?? reason));

  const render = (events: ServerSentEvent[]): string => {
    let output = '';
    for (const event of events) {
      if (done) continue;
      let data = event.data;
      if (data === '[DONE]') done = true;
      else if (mentionsUsage(data)) {
        const parsed = parseJson(data);
        if (parsed.ok && typeof parsed.value === 'object' && parsed.value !== null) {
          const chunk = parsed.value as Record<string, unknown>;
          usage = usageFromOpenAIWire(chunk.usage) ?? usage;
          if (!clientWantsUsage) {
            const choices = chunk.choices;
            if (!Array.isArray(choices) || choices.length === 0) continue;
            delete chunk.usage;
            data = JSON.stringify(chunk);
          }
        }
      } else if (data.includes('"error"') && upstreamErrorEvent.test(data)) {
        failure ??= upstreamStreamError(providerName);
        data = redactor.redact(data);
      }
      // A multi-line payload keeps one `data:` prefix per line, as it came.
      const framed = data.includes('\n') ? data.replaceAll('\n', '\ndata: ') : data;
      output += event.event === undefined ? `data: ${framed}\n\n` : `event: ${event.event}\ndata: ${framed}\n\n`;
    }
    return output;
  };

  const transformer: CancellableTransformer<Uint8Array, Uint8Array> = {
    transform(chunk, controller) {
      let output: string;
      try {
        output = render(decoder.push(textDecoder.decode(chunk, { stream: true })));
      } catch (error) {
        // An event too large to hold (the decoder's cap): end with the error event, as a broken stream would.
        failure = sanitizedUpstreamError(toGatewayError(error), providerName, redactor);
        controller.enqueue(textEncoder.encode(`data: ${JSON.stringify(openAIErrorBody(failure))}\n\n`));
        controller.terminate();
        finish();
        return;
      }
      if (output.length > 0) controller.enqueue(textEncoder.encode(output));
    },
    flush(controller) {
      // An event the stream ended inside of (no blank line after it) is relayed only when it is whole: a torn JSON
      // fragment would break the client's parser before it could read the error event that follows.
      const rest = decoder.push(textDecoder.decode());
      const last = decoder.end().filter((event) => event.data === '[DONE]' || parseJson(event.data).ok);
      let output = render([...rest, ...last]);
      if (!done && failure === undefined) {
        failure = incompleteStream(providerName);
        output += `data: ${JSON.stringify(openAIErrorBody(failure))}\n\n`;
      }
      if (output.length > 0) controller.enqueue(textEncoder.encode(output));
      finish();
    },
    cancel(reason) {
      finish(reason);
    },
  };
  return transformer;
}

/** The same transformation as a TransformStream (for `pipeThrough`). */
export function createOpenAIPassthroughStream(
  options: OpenAIPassthroughOptions,
): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream<Uint8Array, Uint8Array>(createOpenAIPassthroughTransformer(options));
}
