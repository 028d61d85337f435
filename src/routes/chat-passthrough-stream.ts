import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import { usageFromOpenAIWire } from '../dialects/openai-chat/openai-usage-from-wire.ts';
import { parseJson } from '../framing/parse-json.ts';
import { SseDecoder } from '../framing/sse-decoder.ts';
import type { ServerSentEvent } from '../framing/server-sent-event.ts';
import { once, type CancellableTransformer } from './stream-response.ts';

const textEncoder = new TextEncoder();

function mentionsUsage(data: string): boolean {
  const at = data.indexOf('"usage"');
  if (at === -1) return false;
  let index = at + 7;
  while (data.charCodeAt(index) === 32 || data.charCodeAt(index) === 58 /* ':' */) index++;
  return data.charCodeAt(index) === 123; /* '{' */
}

/**
 * The usage tap of a same-dialect (OpenAI) stream: events go through untouched, except the usage the gateway asked
 * for on the client's behalf. The upstream was asked for `stream_options.include_usage`; when the client did not
 * ask, the usage-only chunk is removed (and `usage` is deleted from a content chunk that carries it).
 * Only chunks that mention a usage object are parsed; the rest are re-framed as they came.
 */
export function createOpenAIPassthroughTransformer(
  clientWantsUsage: boolean,
  onEnd: (usage: CanonicalUsage | undefined) => void,
): CancellableTransformer<Uint8Array, Uint8Array> {
  const decoder = new SseDecoder();
  const textDecoder = new TextDecoder();
  let usage: CanonicalUsage | undefined;
  const finish = once(() => onEnd(usage));

  const render = (events: ServerSentEvent[]): string => {
    let output = '';
    for (const event of events) {
      let data = event.data;
      if (mentionsUsage(data)) {
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
      }
      // A multi-line payload keeps one `data:` prefix per line, as it came.
      const framed = data.includes('\n') ? data.replaceAll('\n', '\ndata: ') : data;
      output += event.event === undefined ? `data: ${framed}\n\n` : `event: ${event.event}\ndata: ${framed}\n\n`;
    }
    return output;
  };

  const transformer: CancellableTransformer<Uint8Array, Uint8Array> = {
    transform(chunk, controller) {
      const output = render(decoder.push(textDecoder.decode(chunk, { stream: true })));
      if (output.length > 0) controller.enqueue(textEncoder.encode(output));
    },
    flush(controller) {
      const output = render([...decoder.push(textDecoder.decode()), ...decoder.end()]);
      if (output.length > 0) controller.enqueue(textEncoder.encode(output));
      finish();
    },
    cancel() {
      finish();
    },
  };
  return transformer;
}

/** The same transformation as a TransformStream (for `pipeThrough`). */
export function createOpenAIPassthroughStream(
  clientWantsUsage: boolean,
  onEnd: (usage: CanonicalUsage | undefined) => void,
): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream<Uint8Array, Uint8Array>(createOpenAIPassthroughTransformer(clientWantsUsage, onEnd));
}
