import type { ServerSentEvent } from './server-sent-event.ts';

/**
 * An incremental Server-Sent Events parser following the WHATWG event-stream rules: fields `event`, `data`
 * (joined with "\n" when repeated), `id`; comment lines (`:`) ignored; CR, LF and CRLF line ends; an event is
 * dispatched on a blank line. Text may arrive split anywhere, including inside a CRLF pair.
 */
export class SseDecoder {
  private buffer = '';
  private dataLines: string[] = [];
  private eventName: string | undefined = undefined;
  private lastId: string | undefined = undefined;
  private pendingCarriageReturn = false;

  /** Feeds decoded text; returns the events completed by it. */
  push(text: string): ServerSentEvent[] {
    const events: ServerSentEvent[] = [];
    // An empty chunk must not clear a pending CR: the LF of a split CRLF may still follow.
    if (text.length === 0) return events;
    let input = text;
    if (this.pendingCarriageReturn) {
      this.pendingCarriageReturn = false;
      if (input.startsWith('\n')) input = input.slice(1);
    }
    this.buffer += input;
    let start = 0;
    const buffer = this.buffer;
    for (;;) {
      const lineFeed = buffer.indexOf('\n', start);
      const carriageReturn = buffer.indexOf('\r', start);
      let end: number;
      let next: number;
      if (carriageReturn !== -1 && (lineFeed === -1 || carriageReturn < lineFeed)) {
        end = carriageReturn;
        if (carriageReturn + 1 === buffer.length) {
          this.pendingCarriageReturn = true;
          next = carriageReturn + 1;
        } else {
          next = buffer[carriageReturn + 1] === '\n' ? carriageReturn + 2 : carriageReturn + 1;
        }
      } else if (lineFeed !== -1) {
        end = lineFeed;
        next = lineFeed + 1;
      } else {
        break;
      }
      this.processLine(buffer.slice(start, end), events);
      start = next;
    }
    this.buffer = start === 0 ? buffer : buffer.slice(start);
    return events;
  }

  /** Ends the stream: a final event without its blank line is still dispatched, as upstreams often omit it. */
  end(): ServerSentEvent[] {
    const events: ServerSentEvent[] = [];
    if (this.buffer.length > 0) {
      this.processLine(this.buffer, events);
      this.buffer = '';
    }
    this.dispatch(events);
    return events;
  }

  private processLine(line: string, events: ServerSentEvent[]): void {
    if (line.length === 0) {
      this.dispatch(events);
      return;
    }
    if (line.charCodeAt(0) === 58 /* ':' */) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* ' ' */) value = value.slice(1);
    switch (field) {
      case 'data':
        this.dataLines.push(value);
        break;
      case 'event':
        this.eventName = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      default:
        break;
    }
  }

  private dispatch(events: ServerSentEvent[]): void {
    if (this.dataLines.length === 0) {
      this.eventName = undefined;
      return;
    }
    const data = this.dataLines.length === 1 ? (this.dataLines[0] as string) : this.dataLines.join('\n');
    events.push({ event: this.eventName, data, id: this.lastId });
    this.dataLines = [];
    this.eventName = undefined;
  }
}

/** A TransformStream from upstream bytes to decoded Server-Sent Events. */
export function createSseDecoderStream(): TransformStream<Uint8Array, ServerSentEvent> {
  const textDecoder = new TextDecoder();
  const decoder = new SseDecoder();
  return new TransformStream<Uint8Array, ServerSentEvent>({
    transform(chunk, controller) {
      for (const event of decoder.push(textDecoder.decode(chunk, { stream: true }))) controller.enqueue(event);
    },
    flush(controller) {
      const rest = textDecoder.decode();
      if (rest.length > 0) for (const event of decoder.push(rest)) controller.enqueue(event);
      for (const event of decoder.end()) controller.enqueue(event);
    },
  });
}
