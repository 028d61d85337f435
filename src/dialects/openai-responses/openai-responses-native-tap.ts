import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';
import { toGatewayError, upstreamError, type GatewayError } from '../../errors.ts';
import { parseJson } from '../../framing/parse-json.ts';
import type { ServerSentEvent } from '../../framing/server-sent-event.ts';
import { SseDecoder } from '../../framing/sse-decoder.ts';
import { once, type CancellableTransformer } from '../../framing/stream-end.ts';
import { sanitizedUpstreamError } from '../../security/sanitized-upstream-error.ts';
import type { NativeStreamTapOptions } from '../dialect.ts';
import { renderResponsesStreamBreak } from './openai-responses-render-stream.ts';
import { usageFromResponsesWire } from './openai-responses-usage.ts';

const textEncoder = new TextEncoder();
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

/** An event's type: its `event:` name, else the `type` its data names (parsed only when it may be a watched one). */
function eventType(event: ServerSentEvent): string | undefined {
  if (event.event !== undefined && event.event !== '') return event.event;
  const leading = leadingType.exec(event.data);
  if (leading !== null) return leading[1];
  if (!mentionsWatchedType.test(event.data)) return undefined;
  const parsed = parseJson(event.data);
  return parsed.ok && isRecord(parsed.value) && typeof parsed.value.type === 'string' ? parsed.value.type : undefined;
}

/** The error a pass-through stream ends with when the upstream stops before its terminal event. */
function incompleteStream(providerName: string, responseId: string | undefined): GatewayError {
  const response = responseId === undefined ? '' : ` (response ${responseId})`;
  return upstreamError(
    'upstream_stream_incomplete',
    providerName,
    `The upstream ${providerName} stream${response} ended without its final response.completed event; the answer may be incomplete.`,
    { retryable: true },
  );
}

/** The error recorded for a stream in which the upstream itself sent `error` or `response.failed`. */
function upstreamStreamError(providerName: string): GatewayError {
  return upstreamError(
    'upstream_stream_error',
    providerName,
    `The upstream ${providerName} sent an error in its stream.`,
  );
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
  const decoder = new SseDecoder(options.maxEventLength === undefined ? {} : { maxLineLength: options.maxEventLength });
  const textDecoder = new TextDecoder();
  let usage: CanonicalUsage | undefined;
  let responseId: string | undefined;
  /** The highest `sequence_number` relayed so far (-1 before any). */
  let lastSequence = -1;
  /** A terminal event came: the stream is over, whatever follows. */
  let done = false;
  let failure: GatewayError | undefined;
  const finish = once((reason?: unknown) => options.onEnd(usage, failure ?? reason));
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

  const render = (events: ServerSentEvent[]): string => {
    let output = '';
    for (const event of events) {
      if (done) break;
      let data = event.data;
      const type = eventType(event);
      if (type === 'response.created') {
        readCreated(data);
      } else if (type === 'response.failed' || type === 'error') {
        failure ??= upstreamStreamError(providerName);
        data = redactor.redact(data);
      }
      if (type !== undefined && terminalTypes.has(type)) {
        done = true;
        readTerminal(data);
      }
      const sequence = sequenceNumberField.exec(data);
      if (sequence !== null) lastSequence = Math.max(lastSequence, Number(sequence[1]));
      const framed = data.includes('\n') ? data.replaceAll('\n', '\ndata: ') : data;
      output += type === undefined ? `data: ${framed}\n\n` : `event: ${type}\ndata: ${framed}\n\n`;
    }
    return output;
  };

  /** The error event for an event too large to hold (the decoder's cap), recorded as the failure. */
  const breakOff = (error: unknown): string => {
    failure = sanitizedUpstreamError(toGatewayError(error), providerName, redactor);
    return renderResponsesStreamBreak(failure, lastSequence + 1);
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
        if (!done && failure === undefined) {
          failure = incompleteStream(providerName, responseId);
          output += renderResponsesStreamBreak(failure, lastSequence + 1);
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
