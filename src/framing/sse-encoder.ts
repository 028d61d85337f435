const textEncoder = new TextEncoder();

/** Encodes one SSE event with a JSON (or other single-line) payload: `event: name\ndata: payload\n\n`. */
export function encodeSseEvent(data: string, event?: string): Uint8Array {
  return textEncoder.encode(event === undefined ? `data: ${data}\n\n` : `event: ${event}\ndata: ${data}\n\n`);
}

/** The OpenAI stream terminator. */
export const sseDoneEvent: Uint8Array = textEncoder.encode('data: [DONE]\n\n');
