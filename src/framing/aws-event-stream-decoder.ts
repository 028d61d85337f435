import { upstreamError, type GatewayError } from '../errors.ts';
import { crc32 } from './crc32.ts';

/** A header value of an AWS event-stream message, by its wire type (int64 and timestamps as numbers, UUIDs as hex). */
export type AwsEventStreamHeaderValue = boolean | number | string | Uint8Array;

/** One message of an AWS event stream: its headers by name and its payload bytes. */
export interface AwsEventStreamMessage {
  headers: Record<string, AwsEventStreamHeaderValue>;
  payload: Uint8Array;
}

/** Options of an {@link AwsEventStreamDecoder}. */
export interface AwsEventStreamDecoderOptions {
  /** The provider named in errors. */
  provider: string;
  /**
   * The largest message accepted, in bytes (prelude and CRCs included); a bigger total length fails the stream
   * before anything of the message is buffered. Default {@link defaultAwsEventStreamMaxMessageBytes}.
   */
  maxMessageBytes?: number;
}

/** AWS's own limit on one event-stream message: 16 MiB. */
export const defaultAwsEventStreamMaxMessageBytes = 16 * 1024 * 1024;

/** AWS's limit on the headers of one message: 128 KiB. */
const maxHeadersBytes = 128 * 1024;

/** Total length, headers length, prelude CRC. */
const preludeBytes = 12;

/** The prelude and the message CRC at the end. */
const framingBytes = preludeBytes + 4;

const utf8 = /* @__PURE__ */ new TextDecoder();

function invalid(provider: string, reason: string): GatewayError {
  return upstreamError(
    'upstream_invalid_stream',
    provider,
    `Upstream ${provider} sent an event stream that ${reason}.`,
  );
}

function hex(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += byte.toString(16).padStart(2, '0');
  return text;
}

/** Parses the headers section of a message (bounds checked: a length past the section is a broken stream). */
function parseHeaders(bytes: Uint8Array, provider: string): Record<string, AwsEventStreamHeaderValue> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headers: Record<string, AwsEventStreamHeaderValue> = Object.create(null) as Record<
    string,
    AwsEventStreamHeaderValue
  >;
  let offset = 0;
  const need = (count: number) => {
    if (offset + count > bytes.length) throw invalid(provider, 'has a header running past its headers section');
  };
  while (offset < bytes.length) {
    need(1);
    const nameLength = bytes[offset]!;
    offset += 1;
    need(nameLength + 1);
    const name = utf8.decode(bytes.subarray(offset, offset + nameLength));
    offset += nameLength;
    const type = bytes[offset]!;
    offset += 1;
    let value: AwsEventStreamHeaderValue;
    switch (type) {
      case 0:
      case 1:
        value = type === 0;
        break;
      case 2:
        need(1);
        value = view.getInt8(offset);
        offset += 1;
        break;
      case 3:
        need(2);
        value = view.getInt16(offset);
        offset += 2;
        break;
      case 4:
        need(4);
        value = view.getInt32(offset);
        offset += 4;
        break;
      case 5:
      case 8:
        // int64 and timestamp (epoch ms): exact as numbers up to 2^53, which covers every value AWS sends.
        need(8);
        value = Number(view.getBigInt64(offset));
        offset += 8;
        break;
      case 6:
      case 7: {
        need(2);
        const length = view.getUint16(offset);
        offset += 2;
        need(length);
        const raw = bytes.subarray(offset, offset + length);
        value = type === 7 ? utf8.decode(raw) : raw.slice();
        offset += length;
        break;
      }
      case 9:
        need(16);
        value = hex(bytes.subarray(offset, offset + 16));
        offset += 16;
        break;
      default:
        throw invalid(provider, `has a header of unknown type ${type}`);
    }
    headers[name] = value;
  }
  return headers;
}

/**
 * An incremental decoder of the AWS binary event stream (`application/vnd.amazon.eventstream`, Bedrock's
 * ConverseStream and InvokeModelWithResponseStream): each message is a 12-byte prelude (total length, headers length,
 * the prelude's CRC-32), typed headers, the payload and the CRC-32 of everything before it. Bytes may arrive split
 * anywhere; `push` answers the messages they complete. Both CRCs are checked, every length is bounds checked before it
 * is trusted, and a message longer than `maxMessageBytes` fails the stream before it is buffered, so memory stays
 * bounded by one message whatever the upstream sends. A payload may be a view of the bytes pushed. Errors are 502 GatewayErrors (`upstream_invalid_stream`,
 * `upstream_event_too_large`) naming the provider.
 *
 * @example
 * const decoder = new AwsEventStreamDecoder({ provider: 'bedrock' });
 * for (const message of decoder.push(chunk)) handle(message);
 * decoder.end(); // at the end of the body: throws if it stopped inside a message
 */
export class AwsEventStreamDecoder {
  private readonly provider: string;
  private readonly maxMessageBytes: number;
  /**
   * Bytes received and not yet part of a whole message: `buffer[readAt, writeAt)`. One growable buffer rather than a list
   * of chunks, so an upstream trickling one byte at a time costs a byte each, not an object each; it doubles when
   * full and the unread part moves to the front first, so each byte is copied a bounded number of times.
   */
  private buffer = new Uint8Array(0);
  private readAt = 0;
  private writeAt = 0;
  /** The total length of the message being received, once its prelude was read and checked. */
  private expected: number | undefined;

  constructor(options: AwsEventStreamDecoderOptions) {
    this.provider = options.provider;
    this.maxMessageBytes = options.maxMessageBytes ?? defaultAwsEventStreamMaxMessageBytes;
  }

  /** Feeds bytes; answers the messages they complete, in order. */
  push(chunk: Uint8Array): AwsEventStreamMessage[] {
    const messages: AwsEventStreamMessage[] = [];
    let offset = 0;
    // A chunk holding whole messages is read where it is; only an unfinished message's bytes are buffered.
    if (this.writeAt === this.readAt) {
      while (chunk.length - offset >= preludeBytes) {
        const total = this.readPrelude(chunk.subarray(offset, offset + preludeBytes));
        if (chunk.length - offset < total) break;
        messages.push(this.parseMessage(chunk.subarray(offset, offset + total)));
        offset += total;
      }
    }
    this.append(chunk.subarray(offset));
    for (;;) {
      const available = this.writeAt - this.readAt;
      if (this.expected === undefined) {
        if (available < preludeBytes) break;
        this.expected = this.readPrelude(this.buffer.subarray(this.readAt, this.readAt + preludeBytes));
      }
      if (available < this.expected) break;
      // Copied out: the buffer is reused for what follows.
      const bytes = this.buffer.slice(this.readAt, this.readAt + this.expected);
      this.readAt += this.expected;
      this.expected = undefined;
      messages.push(this.parseMessage(bytes));
    }
    if (this.readAt === this.writeAt) this.readAt = this.writeAt = 0;
    return messages;
  }

  /** The end of the body: throws when it came inside a message (a cut stream). */
  end(): void {
    if (this.writeAt > this.readAt) throw invalid(this.provider, 'ended inside a message');
  }

  private append(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.writeAt + bytes.length > this.buffer.length) {
      const unread = this.writeAt - this.readAt;
      const needed = unread + bytes.length;
      if (needed <= this.buffer.length / 2 && this.readAt > 0) {
        this.buffer.copyWithin(0, this.readAt, this.writeAt);
      } else {
        const grown = new Uint8Array(Math.max(needed, this.buffer.length * 2, 1024));
        grown.set(this.buffer.subarray(this.readAt, this.writeAt));
        this.buffer = grown;
      }
      this.readAt = 0;
      this.writeAt = unread;
    }
    this.buffer.set(bytes, this.writeAt);
    this.writeAt += bytes.length;
  }

  /** Checks a message's prelude; answers its total length. */
  private readPrelude(prelude: Uint8Array): number {
    const view = new DataView(prelude.buffer, prelude.byteOffset, prelude.byteLength);
    const total = view.getUint32(0);
    const headersLength = view.getUint32(4);
    if (crc32(prelude, 0, 8) !== view.getUint32(8))
      throw invalid(this.provider, 'has a message whose prelude CRC is wrong');
    if (total > this.maxMessageBytes) {
      throw upstreamError(
        'upstream_event_too_large',
        this.provider,
        `Upstream ${this.provider} sent an event-stream message of ${total} bytes (the most is ${this.maxMessageBytes}).`,
      );
    }
    if (total < framingBytes || headersLength > maxHeadersBytes || headersLength > total - framingBytes) {
      throw invalid(this.provider, 'has a message whose lengths do not add up');
    }
    return total;
  }

  private parseMessage(bytes: Uint8Array): AwsEventStreamMessage {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const end = bytes.length - 4;
    if (crc32(bytes, 0, end) !== view.getUint32(end)) throw invalid(this.provider, 'has a message whose CRC is wrong');
    const headersEnd = preludeBytes + view.getUint32(4);
    return {
      headers: parseHeaders(bytes.subarray(preludeBytes, headersEnd), this.provider),
      payload: bytes.subarray(headersEnd, end),
    };
  }
}
