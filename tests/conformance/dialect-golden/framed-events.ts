/**
 * A strict reader of the framed events the gateway renders for its clients, independent of the gateway's own
 * `SseDecoder` (which is lenient, as a decoder of upstream bytes must be): every event is `event: <name>\n` (optional)
 * then exactly one `data: <payload>\n`, then a blank line, and the text ends with that blank line. Anything else is a
 * framing problem, reported rather than tolerated.
 */

/** One framed event: its `event:` name (undefined without one) and its `data:` payload. */
export interface FramedEvent {
  event: string | undefined;
  data: string;
}

/** The events of a framed text, and the framing problems found on the way (empty when it is well framed). */
export interface FramedEvents {
  events: FramedEvent[];
  problems: string[];
}

/**
 * Splits framed text into events.
 *
 * @example
 * readFramedEvents('event: ping\ndata: {"type":"ping"}\n\n');
 * // { events: [{ event: 'ping', data: '{"type":"ping"}' }], problems: [] }
 */
export function readFramedEvents(text: string): FramedEvents {
  const problems: string[] = [];
  if (text.includes('\r')) problems.push('the text contains a carriage return (the gateway frames with LF only)');
  if (!text.endsWith('\n\n')) problems.push('the text does not end with a blank line');
  const blocks = text.split('\n\n');
  blocks.pop();
  const events: FramedEvent[] = [];
  blocks.forEach((block, index) => {
    const lines = block.split('\n');
    let event: string | undefined;
    if (lines[0]?.startsWith('event: ')) event = lines.shift()?.slice('event: '.length);
    const [data, ...rest] = lines;
    if (data === undefined || !data.startsWith('data: ') || rest.length > 0) {
      problems.push(`event ${index} is not framed as [event: <name>\\n]data: <payload>: ${JSON.stringify(block)}`);
      return;
    }
    events.push({ event, data: data.slice('data: '.length) });
  });
  return { events, problems };
}

/** The payload parsed as a JSON object, or a problem naming the event. */
export function parseEventObject(
  event: FramedEvent,
  index: number,
): { ok: true; value: Record<string, unknown> } | { ok: false; problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(event.data);
  } catch {
    return { ok: false, problem: `event ${index}: data is not JSON: ${event.data}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, problem: `event ${index}: data is not a JSON object: ${event.data}` };
  return { ok: true, value: value as Record<string, unknown> };
}

/** Whether a value is a plain JSON object. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
