import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import { toGatewayError, upstreamError, type GatewayError } from '../errors.ts';
import { parseJson } from '../framing/parse-json.ts';
import type { ServerSentEvent } from '../framing/server-sent-event.ts';
import { SseDecoder } from '../framing/sse-decoder.ts';
import { once, type CancellableTransformer } from '../framing/stream-end.ts';
import { sanitizedUpstreamError } from '../security/sanitized-upstream-error.ts';
import type { NativeStreamTapOptions } from './dialect.ts';

const textEncoder = new TextEncoder();

/**
 * A dialect's part of a same-dialect stream relay ({@link createNativeStreamRelay}): what its events mean. The relay
 * owns the bytes (decoding, the event cap, the torn last event), the end of the stream and its failure; the dialect
 * reads the events it watches, frames every event back for the client, and says when its stream is over.
 */
export interface NativeStreamDialect {
  /**
   * Reads the events completed by one upstream chunk (or, once, the last ones at the end), in order, and returns
   * them framed for the client (`''` for none), with their data untouched unless the dialect means to change it (a
   * redacted error event, a usage the client did not ask for), or `undefined` when it relays every one of them as
   * it came (same type, same data, none dropped): the relay then forwards the upstream's own bytes when they are
   * framed canonically ({@link SseDecoder.lastPushCanonical}), and frames the events itself otherwise. Events after
   * the one that ends the stream are dropped. An error event the upstream sends is recorded with
   * `stream.recordUpstreamError()`. This is the hot path: it should allocate nothing per unchanged event; a dialect
   * builds text only from the first event it changes on ({@link frameRelayedEvents} frames the ones before it).
   */
  relay(events: readonly ServerSentEvent[], stream: NativeStreamRelayContext): string | undefined;
  /**
   * Whether the stream is over (its final event, or an error event that ends it, was relayed): the relay reads no
   * more. A stream that stops before it is over, with no failure recorded, ends with
   * {@link NativeStreamDialect.incompleteMessage}.
   */
  ended(): boolean;
  /** The usage read so far, reported to `onEnd`. */
  usage(): CanonicalUsage | undefined;
  /** The dialect's framed error event that ends a stream (the event its client's SDK turns into an error). */
  renderBreak(error: GatewayError): string;
  /**
   * The message of the `upstream_stream_incomplete` failure of a stream that stopped before it was over: the final
   * event it lacks, so the client never mistakes a truncated answer for a complete one.
   */
  incompleteMessage(): string;
  /**
   * A data payload that is whole though it is not JSON (OpenAI's `[DONE]`). A last event the stream ended inside of
   * (no blank line after it) is relayed only when its data is whole JSON or this.
   */
  wholeData?: string;
}

/** What the relay lends a dialect while it reads events. */
export interface NativeStreamRelayContext {
  /**
   * Records that the upstream sent an error in its stream, as an `upstream_stream_error` failure naming the
   * provider, unless a failure is recorded already. The failure goes to `onEnd`, and no incomplete-stream error
   * follows it.
   */
  recordUpstreamError(): void;
  /**
   * The decoded text the events came from, when every event's lines lie inside it (the upstream chunk began between
   * events), with {@link NativeStreamRelayContext.eventEnds}; undefined otherwise (then every event must be looked
   * at). A dialect may search it once for what it watches instead of searching every event.
   */
  text: string | undefined;
  /** Where each event ends in `text` (see {@link SseDecoder.lastPushEventEnds}). */
  eventEnds: readonly number[];
  /**
   * What goes before the first event a dialect changes or drops (at index `end`): the first `end` events as they
   * came. Returns their framing ({@link frameRelayedEvents}), or `''` when the relay will put the upstream's own bytes
   * for them there instead (the chunk is exactly those events, in ASCII), which saves framing and encoding them
   * again. Called at most once per `relay` call, and only to start the text that call returns.
   */
  unchanged(end: number): string;
}

/** What a relay needs besides its dialect. */
export interface NativeStreamRelayOptions extends NativeStreamTapOptions {
  /** The longest event (line or data) held before the stream ends with an error; default the decoder's 16 MiB. */
  maxEventLength?: number;
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
 * The transformer of a same-dialect stream: the upstream's Server-Sent Events go to the client as the dialect frames
 * them (untouched, as a rule), while the dialect watches them for usage, error events and its final event.
 *
 * The upstream is not trusted to end well. An event past `maxEventLength` ends the stream with the dialect's error
 * event (the decoder's `upstream_event_too_large`, sanitised: named after the config's provider, secrets redacted).
 * An event the stream ended inside of is relayed only when its data is whole: a torn JSON fragment would break the
 * client's parser before it could read the error event that follows. A stream that stops before the dialect says it
 * is over, with no failure recorded, gets a final error event (`upstream_stream_incomplete`, retryable). `onEnd` is
 * called exactly once, with the dialect's usage and the failure (else the client's cancel reason), when the stream
 * finishes, breaks off or is cancelled; a stream finishes with the chunk that carries the dialect's final event, not
 * at the upstream's end after it: a client stops reading at that event (the SDKs do at `[DONE]`) and may send its
 * next request at once, which must find this one's spend, limits and usage already counted. The transformer then
 * terminates, so the client's stream ends there too: an upstream that holds its connection open (or breaks it) after
 * its final event neither keeps the client waiting nor adds anything after that event.
 *
 * @example
 * let done = false;
 * const transformer = createNativeStreamRelay(
 *   { providerName: 'openai', redactor, onEnd },
 *   {
 *     relay(events, stream) {
 *       for (let index = 0; index < events.length; index++) {
 *         if (done) return stream.unchanged(index); // what follows [DONE] is dropped
 *         done = events[index]!.data === '[DONE]';
 *       }
 *       return undefined; // every event as it came
 *     },
 *     ended: () => done,
 *     usage: () => undefined,
 *     renderBreak: renderOpenAIStreamBreak,
 *     incompleteMessage: () => 'The upstream openai stream ended without its final [DONE] event.',
 *     wholeData: '[DONE]',
 *   },
 * );
 * const body = upstreamResponse.body.pipeThrough(new TransformStream(transformer));
 */
export function createNativeStreamRelay(
  options: NativeStreamRelayOptions,
  dialect: NativeStreamDialect,
): CancellableTransformer<Uint8Array, Uint8Array> {
  const { providerName, redactor } = options;
  const decoder = new SseDecoder(options.maxEventLength === undefined ? {} : { maxLineLength: options.maxEventLength });
  const textDecoder = new TextDecoder();
  let failure: GatewayError | undefined;
  const finish = once((reason?: unknown) => options.onEnd(dialect.usage(), failure ?? reason));
  const stream: NativeStreamRelayContext = {
    recordUpstreamError() {
      failure ??= upstreamStreamError(providerName);
    },
    text: undefined,
    eventEnds: decoder.lastPushEventEnds,
    unchanged(end) {
      if (prefixEnd >= 0) throw new Error('unchanged() called twice for one chunk');
      if (reusableChunk && end > 0) {
        prefixEnd = decoder.lastPushEventEnds[end - 1]!;
        return '';
      }
      prefixEnd = 0;
      return frameRelayedEvents(currentEvents, end);
    },
  };
  /** The events of the relay call in progress. */
  let currentEvents: readonly ServerSentEvent[] = [];
  /** Whether the chunk in progress is its events' bytes, one byte a character (see `unchanged`). */
  let reusableChunk = false;
  /** How many bytes of the chunk in progress go out as they came before the dialect's text; -1 before `unchanged`. */
  let prefixEnd = -1;

  /** The error event for an event too large to hold (the decoder's cap), recorded as the failure. */
  const breakOff = (error: unknown): string => {
    failure = sanitizedUpstreamError(toGatewayError(error), providerName, redactor);
    return dialect.renderBreak(failure);
  };

  let firstChunk = true;

  return {
    transform(chunk, controller) {
      if (dialect.ended()) return;
      let events: ServerSentEvent[];
      let output: string | undefined;
      // The decoder drops a leading byte order mark, so a first chunk that has one is not its events' bytes.
      const startsWithByteOrderMark = firstChunk && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf;
      firstChunk = false;
      try {
        const text = textDecoder.decode(chunk, { stream: true });
        events = decoder.push(text);
        const startedInside = decoder.lastPushStartedInsideEvent;
        stream.text = startedInside ? undefined : text;
        currentEvents = events;
        prefixEnd = -1;
        reusableChunk =
          decoder.lastPushCanonical && !startsWithByteOrderMark && !startedInside && text.length === chunk.byteLength;
        output = dialect.relay(events, stream);
      } catch (error) {
        controller.enqueue(textEncoder.encode(breakOff(error)));
        controller.terminate();
        finish();
        return;
      }
      if (output === undefined) {
        // Every event as it came: the upstream's bytes themselves when they are exactly those events, framed as the
        // relay frames them (no decoding back into bytes), else the events framed again.
        if (events.length === 0) return;
        if (decoder.lastPushCanonical && !startsWithByteOrderMark) controller.enqueue(chunk);
        else controller.enqueue(textEncoder.encode(frameRelayedEvents(events, events.length)));
      } else {
        if (prefixEnd > 0) controller.enqueue(chunk.subarray(0, prefixEnd));
        if (output.length > 0) controller.enqueue(textEncoder.encode(output));
      }
      if (dialect.ended()) {
        // The answer is complete: the client's stream ends with this chunk, whatever the upstream does after it.
        finish();
        controller.terminate();
      }
    },
    flush(controller) {
      let output = '';
      try {
        if (!dialect.ended()) {
          const events = decoder.push(textDecoder.decode());
          for (const event of decoder.end()) {
            if (event.data === dialect.wholeData || parseJson(event.data).ok) events.push(event);
          }
          stream.text = undefined;
          currentEvents = events;
          prefixEnd = -1;
          reusableChunk = false;
          output = dialect.relay(events, stream) ?? frameRelayedEvents(events, events.length);
        }
        if (!dialect.ended() && failure === undefined) {
          failure = upstreamError('upstream_stream_incomplete', providerName, dialect.incompleteMessage(), {
            retryable: true,
          });
          output += dialect.renderBreak(failure);
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

/**
 * One relayed event, framed `event: <type>\ndata: <data>\n\n` (only `data: <data>\n\n` without a type), with the
 * bytes of `data` untouched: a multi-line payload keeps one `data:` prefix per line, as it came.
 */
export function frameRelayedEvent(type: string | undefined, data: string): string {
  const framed = data.includes('\n') ? data.replaceAll('\n', '\ndata: ') : data;
  return type === undefined ? `data: ${framed}\n\n` : `event: ${type}\ndata: ${framed}\n\n`;
}

/**
 * The first `end` of `events` framed for the client as they came ({@link frameRelayedEvent}): what a dialect that
 * relayed them unchanged so far puts before the first event it changes or drops.
 */
export function frameRelayedEvents(events: readonly ServerSentEvent[], end: number): string {
  let output = '';
  for (let index = 0; index < end; index++) {
    const event = events[index]!;
    output += frameRelayedEvent(event.event, event.data);
  }
  return output;
}

/**
 * An event's type in a dialect whose data names it (`{"type":"message_start",...}`): its `event:` name, else the
 * `type` its data starts with (`leadingType`, capturing it, read without a parse), else the `type` of its parsed
 * data, parsed only when `mayBeWatched` says the data may be one of the events the dialect reads.
 */
export function relayedEventType(
  event: ServerSentEvent,
  leadingType: RegExp,
  mayBeWatched: RegExp,
): string | undefined {
  if (event.event !== undefined && event.event !== '') return event.event;
  const leading = leadingType.exec(event.data);
  if (leading !== null) return leading[1];
  if (!mayBeWatched.test(event.data)) return undefined;
  const parsed = parseJson(event.data);
  if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)) {
    return undefined;
  }
  const type = (parsed.value as Record<string, unknown>).type;
  return typeof type === 'string' ? type : undefined;
}
