import { GatewayError } from '../errors.ts';
import type { ServerSentEvent } from './server-sent-event.ts';

/** The longest line (and the most data of one event) an {@link SseDecoder} holds by default: 16 MiB of characters. */
export const defaultSseMaxLineLength = 16 * 1024 * 1024;

/** Options of an {@link SseDecoder}. */
export interface SseDecoderOptions {
  /**
   * The most characters one line may have (its line end not counted), and the most one event's data may add up to
   * (data lines and the line breaks joining them). Past it, `push` throws a 502 GatewayError with the code
   * `upstream_event_too_large` instead of buffering without bound. Default {@link defaultSseMaxLineLength}.
   */
  maxLineLength?: number;
}

function eventTooLarge(limit: number): GatewayError {
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_event_too_large',
    message: `The upstream sent a server-sent event line longer than ${limit} characters.`,
  });
}

const lineFeed = 10;

/**
 * An incremental Server-Sent Events parser following the WHATWG event-stream rules: fields `event`, `data`
 * (joined with "\n" when repeated), `id`; comment lines (`:`) ignored; CR, LF and CRLF line ends; an event is
 * dispatched on a blank line. Text may arrive split anywhere, including inside a CRLF pair.
 *
 * Linear in the text fed, however it is cut: each push scans only its own text (once: the next CR and LF positions
 * are remembered, not searched for again after every line), and the start of a line split over many pushes is kept
 * as a short list of pieces, merged pairwise as they grow (each character is copied a logarithmic number of times
 * at most), instead of one string rescanned and re-concatenated on every push. Memory is bounded by
 * `maxLineLength`.
 */
export class SseDecoder {
  /** The start of a line whose end has not arrived yet, as pieces whose lengths decrease at least twofold. */
  private pendingPieces: string[] = [];
  private pendingLength = 0;
  private dataLines: string[] = [];
  /** Characters the current event's data will have once joined. */
  private dataLength = 0;
  private eventName: string | undefined = undefined;
  private lastId: string | undefined = undefined;
  private pendingCarriageReturn = false;
  private canonical = false;
  /** Where each event completed by the last push ends in its text (just past its blank line). */
  private readonly eventEnds: number[] = [];
  /** Whether the last push began inside an event: the first event it completed started in earlier text. */
  private startedInsideEvent = false;
  private readonly maxLineLength: number;

  constructor(options: SseDecoderOptions = {}) {
    this.maxLineLength = options.maxLineLength ?? defaultSseMaxLineLength;
  }

  /**
   * Whether the text of the last {@link SseDecoder.push} was exactly the events it returned, each framed the way
   * `frameRelayedEvent` frames one (`event: <type>\n` first when there is a type, one `data: <line>\n` per data line,
   * a blank line): it began and ended between events, used LF line ends only, and had no comment, `id`, `retry` or
   * other field, no field without its one space, and no blank line that dispatched nothing. A relay that leaves every
   * event as it came may then forward the upstream's bytes instead of framing the events again.
   */
  get lastPushCanonical(): boolean {
    return this.canonical;
  }

  /**
   * Where each event the last {@link SseDecoder.push} returned ends in the text it was given: `lastPushEventEnds[i]`
   * is the offset just past the blank line that completed event `i`, so event `i`'s lines lie between the previous
   * end (0 for the first) and its own. A dialect may then search the whole text once for what it watches and look
   * only at the events where it occurs, provided no event began in earlier text
   * ({@link SseDecoder.lastPushStartedInsideEvent}).
   */
  get lastPushEventEnds(): readonly number[] {
    return this.eventEnds;
  }

  /**
   * Whether the last {@link SseDecoder.push} began inside an event (a line or an event left unfinished by the text
   * before it): its first event then has lines in earlier text, which {@link SseDecoder.lastPushEventEnds} does not
   * cover.
   */
  get lastPushStartedInsideEvent(): boolean {
    return this.startedInsideEvent;
  }

  /** Feeds decoded text; returns the events completed by it. Throws when a line or an event grows past the cap. */
  push(text: string): ServerSentEvent[] {
    const events: ServerSentEvent[] = [];
    this.canonical = false;
    this.eventEnds.length = 0;
    this.startedInsideEvent =
      this.pendingPieces.length > 0 || this.dataLines.length > 0 || this.eventName !== undefined;
    // An empty chunk must not clear a pending CR: the LF of a split CRLF may still follow.
    if (text.length === 0) return events;
    this.canonical =
      this.pendingPieces.length === 0 &&
      this.dataLines.length === 0 &&
      this.eventName === undefined &&
      !this.pendingCarriageReturn;
    let start = 0;
    if (this.pendingCarriageReturn) {
      this.pendingCarriageReturn = false;
      if (text.charCodeAt(0) === lineFeed) start = 1;
    }
    const length = text.length;
    // The next LF and CR at or after `start`; -1 once there is none left in this text.
    let nextLineFeed = text.indexOf('\n', start);
    let nextCarriageReturn = text.indexOf('\r', start);
    if (nextCarriageReturn !== -1) this.canonical = false;
    for (;;) {
      if (nextLineFeed !== -1 && nextLineFeed < start) nextLineFeed = text.indexOf('\n', start);
      if (nextCarriageReturn !== -1 && nextCarriageReturn < start) nextCarriageReturn = text.indexOf('\r', start);
      let end: number;
      let next: number;
      if (nextCarriageReturn !== -1 && (nextLineFeed === -1 || nextCarriageReturn < nextLineFeed)) {
        end = nextCarriageReturn;
        if (end + 1 === length) {
          this.pendingCarriageReturn = true;
          next = end + 1;
        } else {
          next = text.charCodeAt(end + 1) === lineFeed ? end + 2 : end + 1;
        }
      } else if (nextLineFeed !== -1) {
        end = nextLineFeed;
        next = end + 1;
      } else {
        break;
      }
      if (this.pendingLength + end - start > this.maxLineLength) throw eventTooLarge(this.maxLineLength);
      const dispatched = events.length;
      this.processLine(this.takeLine(text.slice(start, end)), events);
      if (events.length !== dispatched) this.eventEnds.push(next);
      start = next;
    }
    if (start < length) {
      this.canonical = false;
      this.appendPending(start === 0 ? text : text.slice(start));
    } else if (this.dataLines.length > 0 || this.eventName !== undefined) this.canonical = false;
    return events;
  }

  /** Keeps the start of an unfinished line, merging pieces so that there are never more than about log2(n) of them. */
  private appendPending(piece: string): void {
    this.pendingLength += piece.length;
    if (this.pendingLength > this.maxLineLength) throw eventTooLarge(this.maxLineLength);
    const pieces = this.pendingPieces;
    pieces.push(piece);
    // Like a binary counter: a piece no longer than the one after it is merged with it, so piece lengths keep
    // decreasing at least twofold along the list, and a character takes part in O(log n) merges.
    while (pieces.length > 1 && pieces[pieces.length - 2]!.length <= pieces[pieces.length - 1]!.length) {
      const last = pieces.pop()!;
      pieces[pieces.length - 1] = [pieces[pieces.length - 1], last].join('');
    }
  }

  /** The pending start of a line followed by `rest`; empties the pending pieces. */
  private takeLine(rest: string): string {
    if (this.pendingPieces.length === 0) return rest;
    this.pendingPieces.push(rest);
    const line = this.pendingPieces.join('');
    this.pendingPieces = [];
    this.pendingLength = 0;
    return line;
  }

  /** Ends the stream: a final event without its blank line is still dispatched, as upstreams often omit it. */
  end(): ServerSentEvent[] {
    const events: ServerSentEvent[] = [];
    if (this.pendingLength > 0) this.processLine(this.takeLine(''), events);
    this.dispatch(events);
    return events;
  }

  private processLine(line: string, events: ServerSentEvent[]): void {
    if (line.length === 0) {
      if (this.dataLines.length === 0) this.canonical = false;
      this.dispatch(events);
      return;
    }
    if (line.charCodeAt(0) === 58 /* ':' */) {
      this.canonical = false;
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    const spaced = value.charCodeAt(0) === 32; /* ' ' */
    if (spaced) value = value.slice(1);
    switch (field) {
      case 'data':
        if (!spaced) this.canonical = false;
        this.dataLength += (this.dataLines.length > 0 ? 1 : 0) + value.length;
        if (this.dataLength > this.maxLineLength) throw eventTooLarge(this.maxLineLength);
        this.dataLines.push(value);
        break;
      case 'event':
        if (!spaced || this.dataLines.length > 0 || this.eventName !== undefined) this.canonical = false;
        this.eventName = value;
        break;
      case 'id':
        this.canonical = false;
        if (!value.includes('\0')) this.lastId = value;
        break;
      default:
        this.canonical = false;
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
    this.dataLength = 0;
    this.eventName = undefined;
  }
}

/** A TransformStream from upstream bytes to decoded Server-Sent Events. */
export function createSseDecoderStream(options: SseDecoderOptions = {}): TransformStream<Uint8Array, ServerSentEvent> {
  const textDecoder = new TextDecoder();
  const decoder = new SseDecoder(options);
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
