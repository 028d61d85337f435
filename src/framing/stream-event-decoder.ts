import { decodeJsonEvent } from './decode-json-events.ts';
import { SseDecoder } from './sse-decoder.ts';
import type { StreamEventDecoder, StreamEventItem, StreamFraming } from './stream-events.ts';

export type { StreamEventDecoder, StreamEventItem, StreamFraming } from './stream-events.ts';

/**
 * The SSE decoder of {@link openStreamEventDecoder}: text, JSON `data`, `[DONE]` as the end.
 *
 * @example
 * const decoder = createSseEventDecoder('openai-compatible');
 */
export function createSseEventDecoder(provider: string): StreamEventDecoder {
  const decoder = new SseDecoder();
  const text = new TextDecoder();
  const decode = (event: Parameters<typeof decodeJsonEvent>[0]): StreamEventItem =>
    decodeJsonEvent(event, provider) ?? 'end';
  return {
    push: (chunk) => decoder.push(text.decode(chunk, { stream: true })).map(decode),
    end: () => [...decoder.push(text.decode()), ...decoder.end()].map(decode),
  };
}

/**
 * The one place upstream stream bytes become the events provider reducers read, chosen by the translator's declared
 * framing: SSE (at once, no await: every stream today), or the AWS binary event stream (checked frames, JSON
 * payloads, exceptions thrown as upstream errors; its code is loaded on first use, so a bundle whose providers all
 * speak SSE does not evaluate it). Providers never see bytes, lines or frames.
 *
 * @example
 * const opened = openStreamEventDecoder(translator.streamFraming, 'bedrock');
 * const decoder = opened instanceof Promise ? await opened : opened;
 */
export function openStreamEventDecoder(
  framing: StreamFraming,
  provider: string,
): StreamEventDecoder | Promise<StreamEventDecoder> {
  if (framing === 'sse') return createSseEventDecoder(provider);
  return import('./aws-stream-event-decoder.ts').then(({ createAwsEventDecoder }) => createAwsEventDecoder(provider));
}
