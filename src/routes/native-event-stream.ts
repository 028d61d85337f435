import { toGatewayError, type GatewayError } from '../errors.ts';
import type { StreamEventDecoder } from '../framing/stream-events.ts';
import type { CancellableTransformer } from '../framing/stream-end.ts';

const encoder = /* @__PURE__ */ new TextEncoder();

/**
 * Puts a same-dialect stream that arrives in another framing (Claude on Bedrock: Anthropic's events, each inside an
 * AWS event-stream `chunk`) in front of the dialect's own stream tap as the SSE it expects: every decoded event
 * becomes `event: <type>` and `data: <json>`. The AWS frames are checked and unwrapped by the shared decoder; a
 * broken frame or an exception AWS sends ends the stream with the dialect's own error event (`renderBreak`), which
 * the tap sees like any error event the provider sent.
 *
 * @example
 * const tap = reframedAsServerSentEvents(dialect.createNativeStreamTap(request, options), decoder, dialect.renderStreamBreak);
 */
export function reframedAsServerSentEvents(
  tap: CancellableTransformer<Uint8Array, Uint8Array>,
  decoder: StreamEventDecoder,
  renderBreak: (error: GatewayError) => string,
): CancellableTransformer<Uint8Array, Uint8Array> {
  let broken = false;
  const forward = async (
    read: () => ReturnType<StreamEventDecoder['push']>,
    controller: TransformStreamDefaultController<Uint8Array>,
  ) => {
    if (broken) return;
    let text = '';
    try {
      for (const item of read()) {
        if (item === 'end') continue;
        text += `${item.type === undefined ? '' : `event: ${item.type}\n`}data: ${JSON.stringify(item.data)}\n\n`;
      }
    } catch (error) {
      broken = true;
      text += renderBreak(toGatewayError(error));
    }
    if (text !== '') await tap.transform?.(encoder.encode(text), controller);
  };
  return {
    start: (controller) => tap.start?.(controller),
    transform: (chunk, controller) => forward(() => decoder.push(chunk), controller),
    async flush(controller) {
      await forward(() => decoder.end(), controller);
      await tap.flush?.(controller);
    },
    cancel: (reason) => tap.cancel?.(reason),
  };
}
