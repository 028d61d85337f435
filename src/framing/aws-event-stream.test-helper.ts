/**
 * Test support: AWS's own event-stream encoder (`@smithy/core`, a devDependency), the independent encoder the
 * decoder's tests read, and a frame builder for the usual JSON message.
 */
import { EventStreamCodec } from '@smithy/core/event-streams';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** AWS's codec, as the SDKs use it. */
export const awsEventStreamCodec = new EventStreamCodec(
  (bytes) => decoder.decode(bytes),
  (text) => encoder.encode(text),
);

/**
 * One message as AWS frames it: `:message-type` (`event` or `exception`), its type header (`:event-type` or
 * `:exception-type`) and a JSON content type, with `payload` (text) as its body.
 *
 * @example
 * awsFrame('event', 'messageStart', '{"role":"assistant"}');
 */
export function awsFrame(messageType: 'event' | 'exception', type: string, payload: string): Uint8Array {
  return awsEventStreamCodec.encode({
    headers: {
      ':message-type': { type: 'string', value: messageType },
      [messageType === 'event' ? ':event-type' : ':exception-type']: { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
    },
    body: encoder.encode(payload),
  });
}
