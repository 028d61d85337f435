import { readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { awsFrame } from '../../src/framing/aws-event-stream.test-helper.ts';

/**
 * A misbehaving Amazon Bedrock for the chaos suite: ConverseStream (`/model/{model}/converse-stream`) answered with
 * the binary event stream built from Bedrock's recorded `text` case (providers/bedrock/__fixtures__/text.events.json),
 * real frames by AWS's own encoder, then damaged as the model name says:
 * - `text`: the whole stream, intact;
 * - `bad-message-crc`: the first two messages, then one whose message CRC is wrong;
 * - `bad-prelude-crc`: the first two messages, then one whose prelude CRC is wrong;
 * - `truncated-prelude`: the first two messages, then 6 bytes of a prelude, and the body ends;
 * - `cut-message`: the first two messages, then half of the third, and the body ends;
 * - `huge-prelude`: a prelude announcing a 100 MB message (with a correct prelude CRC), then nothing more;
 * - `stall`: the first two messages, then silence with the connection open;
 * - `throttled`: the first two messages, then Bedrock's `throttlingException` message;
 * - `burst:N`: the whole stream with N extra content deltas, in one write.
 * Converse (`/converse`, not streamed) answers the recorded `text.json`.
 */
export interface HostileBedrock {
  url: string;
  close(): Promise<void>;
}

const fixtures = fileURLToPath(new URL('../../providers/bedrock/__fixtures__/', import.meta.url));

interface RecordedEvent {
  eventType: string;
  payload: unknown;
}

const recorded = JSON.parse(readFileSync(`${fixtures}text.events.json`, 'utf8')) as RecordedEvent[];
const frames = recorded.map((event) => awsFrame('event', event.eventType, JSON.stringify(event.payload)));

/** A copy of `frame` with one byte of its prelude CRC (bytes 8-11) or its message CRC (the last 4) flipped. */
function damaged(frame: Uint8Array, where: 'prelude' | 'message'): Uint8Array {
  const copy = frame.slice();
  const index = where === 'prelude' ? 9 : copy.length - 2;
  copy[index] = (copy[index] ?? 0) ^ 0xff;
  return copy;
}

/** A prelude (total length, headers length, CRC-32 of those 8 bytes) announcing a message of `totalLength` bytes. */
function prelude(totalLength: number): Uint8Array {
  const bytes = new Uint8Array(12);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, totalLength);
  view.setUint32(4, 0);
  view.setUint32(8, crc32(bytes.subarray(0, 8)));
  return bytes;
}

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function delta(index: number): Uint8Array {
  return awsFrame('event', 'contentBlockDelta', JSON.stringify({ contentBlockIndex: 0, delta: { text: ` ${index}` } }));
}

function answerStream(model: string, response: ServerResponse, stalled: Set<ServerResponse>): void {
  response.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
  const [name = '', argument] = model.split(':');
  const head = Buffer.concat(frames.slice(0, 2));
  const third = frames[2] ?? new Uint8Array();
  switch (name) {
    case 'bad-message-crc':
      response.end(Buffer.concat([head, damaged(third, 'message')]));
      return;
    case 'bad-prelude-crc':
      response.end(Buffer.concat([head, damaged(third, 'prelude')]));
      return;
    case 'truncated-prelude':
      response.end(Buffer.concat([head, third.subarray(0, 6)]));
      return;
    case 'cut-message':
      response.end(Buffer.concat([head, third.subarray(0, Math.floor(third.length / 2))]));
      return;
    case 'huge-prelude':
      response.write(prelude(100 * 1024 * 1024));
      stalled.add(response);
      return;
    case 'stall':
      response.write(head);
      stalled.add(response);
      return;
    case 'throttled':
      response.end(
        Buffer.concat([
          head,
          awsFrame(
            'exception',
            'throttlingException',
            JSON.stringify({ message: 'Too many requests, please wait before trying again.' }),
          ),
        ]),
      );
      return;
    case 'burst': {
      const extra = Array.from({ length: Number(argument ?? 1000) }, (_, index) => delta(index));
      response.end(Buffer.concat([...frames.slice(0, 3), ...extra, ...frames.slice(3)]));
      return;
    }
    default:
      response.end(Buffer.concat(frames));
  }
}

/** Starts the hostile Bedrock on a free loopback port. */
export async function startHostileBedrock(): Promise<HostileBedrock> {
  const stalled = new Set<ServerResponse>();
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const match = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(request.url ?? '');
      if (match === null) {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"not found"}');
        return;
      }
      const model = decodeURIComponent(match[1] ?? '');
      if (match[2] === 'converse') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(readFileSync(`${fixtures}text.json`));
        return;
      }
      answerStream(model, response, stalled);
      response.once('close', () => stalled.delete(response));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      for (const response of stalled) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
