import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';
import { parseJson } from '../../framing/parse-json.ts';
import { once, type CancellableTransformer } from '../../framing/stream-end.ts';
import type { NativeStreamTapOptions } from '../dialect.ts';
import { createNativeStreamRelay, frameRelayedEvent, relayedEventType } from '../native-stream-relay.ts';
import { renderResponsesStreamBreak } from './openai-responses-render-stream.ts';
import { usageFromResponsesWire } from './openai-responses-usage.ts';

/** The `type` a Responses event's data starts with (OpenAI writes it first), read without a parse. */
const leadingType = /^\s*\{\s*"type"\s*:\s*"([A-Za-z0-9_.]+)"/;
/** Whether data may be one of the events the tap reads, when its `type` is not the first key. */
const mentionsWatchedType = /"(?:response\.(?:created|completed|incomplete|failed)|error)"/;
/**
 * An event's `sequence_number`, read without a parse. Inside a JSON string a quote is always escaped, so this matches
 * only a key (OpenAI's, once per event; a nested key of that name with a number value could mislead it, which would
 * only misnumber the error event the tap appends).
 */
const sequenceNumberField = /"sequence_number"\s*:\s*(\d+)/;
/** The events that end a Responses stream, each carrying the final Response object. */
const terminalTypes = new Set(['response.completed', 'response.incomplete', 'response.failed']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What the Responses stream tap needs besides the usual tap options. */
export interface ResponsesNativeStreamTapOptions extends NativeStreamTapOptions {
  /** The longest event (line or data) held before the stream ends with an error; default the decoder's 16 MiB. */
  maxEventLength?: number;
  /**
   * Called once with the `response` object of the terminal event (`response.completed`, `response.incomplete` or
   * `response.failed`, the last with the gateway's secrets redacted), so the gateway can record which deployment
   * the response id belongs to and store it. Not called for a stream cut off before its terminal event.
   */
  onResponse?: (response: Record<string, unknown>) => void;
}

/**
 * The usage tap of a same-dialect (OpenAI Responses) stream: the upstream's events go to the client as they came,
 * re-framed `event: <type>\ndata: <data>\n\n` with the bytes of `data` untouched (a multi-line payload keeps one
 * `data:` per line). An event the upstream sent without a name is named after its data's `type`. Only
 * `response.created` (its id, named in the error of a cut stream), the terminal events (`response.completed`,
 * `response.incomplete`, `response.failed`: the usage of their `response`, which goes to `onResponse`) and `error`
 * are parsed; the usage is reported as canonical usage to `onEnd`, exactly once, when the stream finishes or the
 * client cancels.
 *
 * The upstream is not trusted to end well: `error` and `response.failed` are relayed with the gateway's secrets
 * redacted and recorded as an `upstream_stream_error` failure (OpenAI sends `error` then `response.failed`, so an
 * `error` does not end the relay); a stream that ends without a terminal event (cut off, or not an event stream at
 * all) gets a final `event: error` (`upstream_stream_incomplete`, numbered after the last `sequence_number` seen),
 * so the client never mistakes a truncated answer for a complete one; an event past `maxEventLength` ends the
 * stream with an error event. Anything after a terminal event is dropped.
 *
 * @example
 * const body = upstreamResponse.body.pipeThrough(
 *   new TransformStream(createResponsesNativeStreamTap({ providerName: 'openai', redactor, onEnd, onResponse })),
 * );
 */
export function createResponsesNativeStreamTap(
  options: ResponsesNativeStreamTapOptions,
): CancellableTransformer<Uint8Array, Uint8Array> {
  const { providerName, redactor } = options;
  let usage: CanonicalUsage | undefined;
  let responseId: string | undefined;
  /** The highest `sequence_number` relayed so far (-1 before any). */
  let lastSequence = -1;
  /** A terminal event came: the stream is over, whatever follows. */
  let done = false;
  const reportResponse = once((response: Record<string, unknown>) => options.onResponse?.(response));

  const readCreated = (data: string): void => {
    const parsed = parseJson(data);
    if (parsed.ok && isRecord(parsed.value) && isRecord(parsed.value.response)) {
      const id = parsed.value.response.id;
      if (typeof id === 'string') responseId = id;
    }
  };

  const readTerminal = (data: string): void => {
    const parsed = parseJson(data);
    if (!parsed.ok || !isRecord(parsed.value) || !isRecord(parsed.value.response)) return;
    const response = parsed.value.response;
    usage = usageFromResponsesWire(response.usage) ?? usage;
    reportResponse(response);
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
        if (type === 'response.created') {
          readCreated(data);
        } else if (type === 'response.failed' || type === 'error') {
          stream.recordUpstreamError();
          data = redactor.redact(data);
        }
        if (type !== undefined && terminalTypes.has(type)) {
          done = true;
          readTerminal(data);
        }
        const sequence = sequenceNumberField.exec(data);
        if (sequence !== null) lastSequence = Math.max(lastSequence, Number(sequence[1]));
        if (output === undefined && (data !== event.data || type !== event.event)) {
          output = stream.unchanged(index);
        }
        if (output !== undefined) output += frameRelayedEvent(type, data);
      }
      return output;
    },
    ended: () => done,
    usage: () => usage,
    renderBreak: (error) => renderResponsesStreamBreak(error, lastSequence + 1),
    incompleteMessage() {
      const response = responseId === undefined ? '' : ` (response ${responseId})`;
      return `The upstream ${providerName} stream${response} ended without its final response.completed event; the answer may be incomplete.`;
    },
  });
}
