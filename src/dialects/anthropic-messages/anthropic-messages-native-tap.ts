import { parseJson } from '../../framing/parse-json.ts';
import type { CancellableTransformer } from '../../framing/stream-end.ts';
import type { NativeStreamTapOptions } from '../dialect.ts';
import { createNativeStreamRelay, frameRelayedEvent, relayedEventType } from '../native-stream-relay.ts';
import { renderAnthropicStreamBreak } from './anthropic-messages-render-stream.ts';
import {
  anthropicUsageSchema,
  mergeAnthropicUsage,
  toCanonicalUsage,
} from '../../canonical/wire/anthropic-wire-usage.ts';

/** The `type` an Anthropic event's data starts with (Anthropic writes it first), read without a parse. */
const leadingType = /^\s*\{\s*"type"\s*:\s*"([A-Za-z_]+)"/;
/** Whether data may be one of the events the tap reads, when its `type` is not the first key. */
const mentionsWatchedType = /"(?:message_start|message_delta|message_stop|error)"/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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
  let rawUsage: Record<string, unknown> | undefined;
  /** `message_stop` or an `error` event came: the stream is over, whatever follows. */
  let done = false;

  const readUsage = (value: unknown): void => {
    if (isRecord(value) && anthropicUsageSchema.safeParse(value).success)
      rawUsage = mergeAnthropicUsage(rawUsage, value);
  };

  return createNativeStreamRelay(options, {
    relay(events, stream) {
      // Built only from the first event changed or dropped; undefined while every event goes as it came.
      let output: string | undefined;
      for (let index = 0; index < events.length; index++) {
        if (done) return output ?? stream.unchanged(index);
        const event = events[index]!;
        let data = event.data;
        const type = relayedEventType(event, leadingType, mentionsWatchedType);
        if (type === 'message_start' || type === 'message_delta') {
          const parsed = parseJson(data);
          if (parsed.ok && isRecord(parsed.value)) {
            const body = parsed.value;
            readUsage(
              type === 'message_start' ? (isRecord(body.message) ? body.message.usage : undefined) : body.usage,
            );
          }
        } else if (type === 'message_stop') {
          done = true;
        } else if (type === 'error') {
          done = true;
          stream.recordUpstreamError();
          data = redactor.redact(data);
        }
        if (output === undefined && (data !== event.data || type !== event.event)) {
          output = stream.unchanged(index);
        }
        if (output !== undefined) output += frameRelayedEvent(type, data);
      }
      return output;
    },
    ended: () => done,
    usage() {
      if (rawUsage === undefined) return undefined;
      const parsed = anthropicUsageSchema.safeParse(rawUsage);
      return parsed.success ? toCanonicalUsage(parsed.data, rawUsage) : undefined;
    },
    renderBreak: renderAnthropicStreamBreak,
    incompleteMessage: () =>
      `The upstream ${providerName} stream ended without its final message_stop event; the answer may be incomplete.`,
  });
}
