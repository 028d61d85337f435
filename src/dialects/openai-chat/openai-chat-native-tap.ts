import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';
import { usageFromOpenAIWire } from './openai-usage-from-wire.ts';
import { parseJson } from '../../framing/parse-json.ts';
import { noSecretRedactor, type SecretRedactor } from '../../security/secret-redactor.ts';
import type { CancellableTransformer, StreamEnd } from '../../framing/stream-end.ts';
import { createNativeStreamRelay, frameRelayedEvent } from '../native-stream-relay.ts';
import { renderOpenAIStreamBreak } from './openai-chat-render-stream.ts';

/** OpenAI's mid-stream error event: `data: {"error":{...}}`. */
const upstreamErrorEvent = /^\s*\{\s*"error"\s*:/;

/** What the per-event tests look for first, in one search: a usage object (`"usage"`, spaces or colons, `{`) or `"error"`. */
const watchedPattern = /"usage"[ :]*\{|"error"/g;
const noEvents: readonly number[] = [];

/**
 * The indices of the events whose lines (between the previous event's end and their own, in `text`) may hold a usage
 * object, and those that may hold an error, ascending; from one search of the whole text instead of two per event:
 * an event without a match cannot pass the per-event test the match stands for.
 */
function watchedEvents(text: string, ends: readonly number[]): { usage: readonly number[]; error: readonly number[] } {
  watchedPattern.lastIndex = 0;
  let match = watchedPattern.exec(text);
  if (match === null) return { usage: noEvents, error: noEvents };
  const usage: number[] = [];
  const error: number[] = [];
  let event = 0;
  while (match !== null) {
    while (event < ends.length && ends[event]! <= match.index) event++;
    // A match after the last complete event is in one this text has not finished: the next text covers it.
    if (event === ends.length) break;
    const found = match[0].charCodeAt(1) === 117 /* 'u' */ ? usage : error;
    if (found.at(-1) !== event) found.push(event);
    match = watchedPattern.exec(text);
  }
  return { usage, error };
}

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

/**
 * The usage tap of a same-dialect (OpenAI) stream: events go through untouched, except the usage the gateway asked
 * for on the client's behalf. The upstream was asked for `stream_options.include_usage`; when the client did not
 * ask, the usage-only chunk is removed (and `usage` is deleted from a content chunk that carries it).
 * Only chunks that mention a usage object are parsed; the rest are re-framed as they came.
 *
 * The upstream is not trusted to end well ({@link createNativeStreamRelay}): an error event it sends is relayed with
 * the gateway's secrets redacted, and a stream that ends without `data: [DONE]` (cut off, or not an event stream at
 * all) gets a final error event, so the client never mistakes a truncated answer for a complete one.
 */
export function createOpenAIPassthroughTransformer(
  options: OpenAIPassthroughOptions,
): CancellableTransformer<Uint8Array, Uint8Array> {
  const { clientWantsUsage, providerName } = options;
  const redactor = options.redactor ?? noSecretRedactor;
  let usage: CanonicalUsage | undefined;
  let done = false;

  return createNativeStreamRelay(
    { ...options, redactor },
    {
      relay(events, stream) {
        // Built only from the first event changed or dropped; undefined while every event goes as it came.
        let output: string | undefined;
        // Which events may carry a usage object or an error, from one search of the chunk's text each (undefined: the
        // text does not cover every event, so each is looked at).
        const text = stream.text;
        const watched = text === undefined ? undefined : watchedEvents(text, stream.eventEnds);
        const usageEvents = watched?.usage;
        const errorEvents = watched?.error;
        let nextUsage = 0;
        let nextError = 0;
        for (let index = 0; index < events.length; index++) {
          if (done) return output ?? stream.unchanged(index);
          const event = events[index]!;
          let data = event.data;
          const mayHoldUsage = usageEvents === undefined || usageEvents[nextUsage] === index;
          if (mayHoldUsage && usageEvents !== undefined) nextUsage++;
          const mayHoldError = errorEvents === undefined || errorEvents[nextError] === index;
          if (mayHoldError && errorEvents !== undefined) nextError++;
          if (data === '[DONE]') done = true;
          else if (mayHoldUsage && mentionsUsage(data)) {
            const parsed = parseJson(data);
            if (parsed.ok && typeof parsed.value === 'object' && parsed.value !== null) {
              const chunk = parsed.value as Record<string, unknown>;
              usage = usageFromOpenAIWire(chunk.usage) ?? usage;
              if (!clientWantsUsage) {
                output ??= stream.unchanged(index);
                const choices = chunk.choices;
                if (!Array.isArray(choices) || choices.length === 0) continue;
                delete chunk.usage;
                data = JSON.stringify(chunk);
              }
            }
          } else if (mayHoldError && data.includes('"error"') && upstreamErrorEvent.test(data)) {
            stream.recordUpstreamError();
            data = redactor.redact(data);
          }
          if (output === undefined && data !== event.data) output = stream.unchanged(index);
          if (output !== undefined) output += frameRelayedEvent(event.event, data);
        }
        return output;
      },
      ended: () => done,
      usage: () => usage,
      renderBreak: renderOpenAIStreamBreak,
      incompleteMessage: () =>
        `The upstream ${providerName} stream ended without its final [DONE] event; the answer may be incomplete.`,
      wholeData: '[DONE]',
    },
  );
}

/** The same transformation as a TransformStream (for `pipeThrough`). */
export function createOpenAIPassthroughStream(
  options: OpenAIPassthroughOptions,
): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream<Uint8Array, Uint8Array>(createOpenAIPassthroughTransformer(options));
}
