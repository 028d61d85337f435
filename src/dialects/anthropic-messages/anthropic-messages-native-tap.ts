import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';
import { toGatewayError, upstreamError, type GatewayError } from '../../errors.ts';
import { parseJson } from '../../framing/parse-json.ts';
import type { ServerSentEvent } from '../../framing/server-sent-event.ts';
import { SseDecoder } from '../../framing/sse-decoder.ts';
import { once, type CancellableTransformer } from '../../framing/stream-end.ts';
import { sanitizedUpstreamError } from '../../security/sanitized-upstream-error.ts';
import type { NativeStreamTapOptions } from '../dialect.ts';
import { renderAnthropicStreamBreak } from './anthropic-messages-render-stream.ts';
import {
  anthropicUsageSchema,
  mergeAnthropicUsage,
  toCanonicalUsage,
} from '../../canonical/wire/anthropic-wire-usage.ts';

const textEncoder = new TextEncoder();
/** The `type` an Anthropic event's data starts with (Anthropic writes it first), read without a parse. */
const leadingType = /^\s*\{\s*"type"\s*:\s*"([A-Za-z_]+)"/;
/** Whether data may be one of the events the tap reads, when its `type` is not the first key. */
const mentionsWatchedType = /"(?:message_start|message_delta|message_stop|error)"/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An event's type: its `event:` name, else the `type` its data names (parsed only when it may be a watched one). */
function eventType(event: ServerSentEvent): string | undefined {
  if (event.event !== undefined && event.event !== '') return event.event;
  const leading = leadingType.exec(event.data);
  if (leading !== null) return leading[1];
  if (!mentionsWatchedType.test(event.data)) return undefined;
  const parsed = parseJson(event.data);
  return parsed.ok && isRecord(parsed.value) && typeof parsed.value.type === 'string' ? parsed.value.type : undefined;
}

/** The error a pass-through stream ends with when the upstream stops without Anthropic's final `message_stop`. */
function incompleteStream(providerName: string): GatewayError {
  return upstreamError(
    'upstream_stream_incomplete',
    providerName,
    `The upstream ${providerName} stream ended without its final message_stop event; the answer may be incomplete.`,
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
 * The usage tap of a same-dialect (Anthropic Messages) stream: the upstream's events go to the client as they came,
 * re-framed `event: <type>\ndata: <data>\n\n` with the bytes of `data` untouched (thinking signatures arrive byte
 * for byte; a multi-line payload keeps one `data:` per line). An event the upstream sent without a name is named
 * after its data's `type`, since the Anthropic SDK skips unnamed events. Only `message_start` and `message_delta`
 * (usage, merged with {@link mergeAnthropicUsage}) and `error` are parsed; the usage is reported as canonical usage
 * to `onEnd`, exactly once, when the stream finishes or the client cancels.
 *
 * The upstream is not trusted to end well: its `error` event is relayed with the gateway's secrets redacted and
 * recorded as an `upstream_stream_error` failure; a stream that ends without `message_stop` (cut off, or not an
 * event stream at all) gets a final `event: error` (`upstream_stream_incomplete`), so the client never mistakes a
 * truncated answer for a complete one; an event past `maxEventLength` (default the decoder's 16 MiB) ends the stream
 * with an error event. Anything after `message_stop` or an `error` event is dropped.
 *
 * @example
 * const body = upstreamResponse.body.pipeThrough(
 *   new TransformStream(createAnthropicNativeStreamTap({ providerName: 'anthropic', redactor, onEnd })),
 * );
 */
export function createAnthropicNativeStreamTap(
  options: NativeStreamTapOptions & { maxEventLength?: number },
): CancellableTransformer<Uint8Array, Uint8Array> {
  const { providerName, redactor } = options;
  const decoder = new SseDecoder(options.maxEventLength === undefined ? {} : { maxLineLength: options.maxEventLength });
  const textDecoder = new TextDecoder();
  let rawUsage: Record<string, unknown> | undefined;
  /** `message_stop` or an `error` event came: the stream is over, whatever follows. */
  let done = false;
  let stopped = false;
  let failure: GatewayError | undefined;

  const usage = (): CanonicalUsage | undefined => {
    if (rawUsage === undefined) return undefined;
    const parsed = anthropicUsageSchema.safeParse(rawUsage);
    return parsed.success ? toCanonicalUsage(parsed.data, rawUsage) : undefined;
  };
  const finish = once((reason?: unknown) => options.onEnd(usage(), failure ?? reason));

  const readUsage = (value: unknown): void => {
    if (isRecord(value) && anthropicUsageSchema.safeParse(value).success)
      rawUsage = mergeAnthropicUsage(rawUsage, value);
  };

  const render = (events: ServerSentEvent[]): string => {
    let output = '';
    for (const event of events) {
      if (done) break;
      let data = event.data;
      const type = eventType(event);
      if (type === 'message_start' || type === 'message_delta') {
        const parsed = parseJson(data);
        if (parsed.ok && isRecord(parsed.value)) {
          const body = parsed.value;
          readUsage(type === 'message_start' ? (isRecord(body.message) ? body.message.usage : undefined) : body.usage);
        }
      } else if (type === 'message_stop') {
        done = stopped = true;
      } else if (type === 'error') {
        done = true;
        failure ??= upstreamStreamError(providerName);
        data = redactor.redact(data);
      }
      const framed = data.includes('\n') ? data.replaceAll('\n', '\ndata: ') : data;
      output += type === undefined ? `data: ${framed}\n\n` : `event: ${type}\ndata: ${framed}\n\n`;
    }
    return output;
  };

  /** The error event for an event too large to hold (the decoder's cap), recorded as the failure. */
  const breakOff = (error: unknown): string => {
    failure = sanitizedUpstreamError(toGatewayError(error), providerName, redactor);
    return renderAnthropicStreamBreak(failure);
  };

  return {
    transform(chunk, controller) {
      if (done) return;
      let output: string;
      try {
        output = render(decoder.push(textDecoder.decode(chunk, { stream: true })));
      } catch (error) {
        controller.enqueue(textEncoder.encode(breakOff(error)));
        controller.terminate();
        finish();
        return;
      }
      if (output.length > 0) controller.enqueue(textEncoder.encode(output));
    },
    flush(controller) {
      let output = '';
      try {
        // An event the stream ended inside of (no blank line after it) is relayed only when its data is whole JSON:
        // a torn fragment would break the client's parser before it could read the error event that follows.
        if (!done) {
          const rest = decoder.push(textDecoder.decode());
          const last = decoder.end().filter((event) => parseJson(event.data).ok);
          output = render([...rest, ...last]);
        }
        if (!stopped && failure === undefined) {
          failure = incompleteStream(providerName);
          output += renderAnthropicStreamBreak(failure);
        }
      } catch (error) {
        output = breakOff(error);
      }
      if (output.length > 0) controller.enqueue(textEncoder.encode(output));
      finish();
    },
    cancel(reason) {
      finish(reason);
    },
  };
}
