/**
 * A minimal RESP2 client over a raw socket, for the Upstash bridge. ioredis would hide what the bridge must see: a
 * status reply (`+OK`) and a bulk string (`$2 OK`) both arrive as the string "OK" there, while Upstash encodes them
 * differently; bulk strings must stay bytes so base64 encodes exactly what Redis holds.
 */
import { connect, type Socket } from 'node:net';

/** A reply as Redis sent it. */
export type RespReply =
  { kind: 'status'; value: string } | { kind: 'error'; message: string } | number | Buffer | null | RespReply[];

/** The end of the buffer came before the end of the reply. */
const incomplete = Symbol('incomplete');

/** Parses one reply at `offset`; answers it and where the next starts, or `incomplete`. */
function parseReply(buffer: Buffer, offset: number): { reply: RespReply; next: number } | typeof incomplete {
  const lineEnd = buffer.indexOf('\r\n', offset);
  if (lineEnd === -1) return incomplete;
  const type = String.fromCharCode(buffer[offset]!);
  const line = buffer.toString('utf8', offset + 1, lineEnd);
  const afterLine = lineEnd + 2;
  switch (type) {
    case '+':
      return { reply: { kind: 'status', value: line }, next: afterLine };
    case '-':
      return { reply: { kind: 'error', message: line }, next: afterLine };
    case ':':
      return { reply: Number(line), next: afterLine };
    case '$': {
      const length = Number(line);
      if (length === -1) return { reply: null, next: afterLine };
      if (buffer.length < afterLine + length + 2) return incomplete;
      return { reply: buffer.subarray(afterLine, afterLine + length), next: afterLine + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count === -1) return { reply: null, next: afterLine };
      const items: RespReply[] = [];
      let next = afterLine;
      for (let index = 0; index < count; index++) {
        const item = parseReply(buffer, next);
        if (item === incomplete) return incomplete;
        items.push(item.reply);
        next = item.next;
      }
      return { reply: items, next };
    }
    default:
      throw new Error(`unexpected RESP type byte ${JSON.stringify(type)}`);
  }
}

/** Encodes a command as a RESP array of bulk strings. */
export function encodeCommand(command: readonly (string | Buffer)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${command.length}\r\n`)];
  for (const argument of command) {
    const bytes = typeof argument === 'string' ? Buffer.from(argument, 'utf8') : argument;
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** One connection to Redis. Commands are pipelined: replies come back in the order the commands went out. */
export class RespConnection {
  readonly #socket: Socket;
  #buffer: Buffer = Buffer.alloc(0);
  readonly #waiting: { resolve: (reply: RespReply) => void; reject: (error: Error) => void }[] = [];
  #failure: Error | undefined;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => this.#receive(chunk));
    socket.on('error', (error) => this.#fail(error));
    socket.on('close', () => this.#fail(new Error('the connection to Redis closed')));
  }

  /** Connects to `redis://[user:password@]host:port[/db]`, authenticating and selecting the database if given. */
  static async open(url: string): Promise<RespConnection> {
    const parsed = new URL(url);
    const socket = connect(Number(parsed.port || 6379), parsed.hostname);
    socket.setNoDelay(true);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const connection = new RespConnection(socket);
    const password = decodeURIComponent(parsed.password);
    const user = decodeURIComponent(parsed.username);
    if (password) await connection.expectOk(user ? ['AUTH', user, password] : ['AUTH', password]);
    const database = parsed.pathname.slice(1);
    if (database) await connection.expectOk(['SELECT', database]);
    return connection;
  }

  /** Whether the connection can still be used. */
  get usable(): boolean {
    return this.#failure === undefined;
  }

  /** Sends the commands in one write and resolves with their replies, in order. */
  send(commands: readonly (readonly (string | Buffer)[])[]): Promise<RespReply[]> {
    if (this.#failure) return Promise.reject(this.#failure);
    const replies = commands.map(
      () => new Promise<RespReply>((resolve, reject) => this.#waiting.push({ resolve, reject })),
    );
    this.#socket.write(Buffer.concat(commands.map(encodeCommand)));
    return Promise.all(replies);
  }

  close(): void {
    this.#socket.destroy();
  }

  private async expectOk(command: string[]): Promise<void> {
    const [reply] = await this.send([command]);
    if (reply === null || typeof reply !== 'object' || Array.isArray(reply) || Buffer.isBuffer(reply))
      throw new Error(`unexpected reply to ${command[0]}`);
    if (reply.kind === 'error') throw new Error(`${command[0]} failed: ${reply.message}`);
  }

  #receive(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    let offset = 0;
    while (offset < this.#buffer.length) {
      const parsed = parseReply(this.#buffer, offset);
      if (parsed === incomplete) break;
      offset = parsed.next;
      const waiter = this.#waiting.shift();
      if (!waiter) {
        this.#fail(new Error('Redis sent a reply nobody asked for'));
        return;
      }
      waiter.resolve(parsed.reply);
    }
    // Copy the rest, so a retained reply does not pin the whole received buffer.
    this.#buffer = offset === 0 ? this.#buffer : Buffer.from(this.#buffer.subarray(offset));
  }

  #fail(error: Error): void {
    if (this.#failure) return;
    this.#failure = error;
    for (const waiter of this.#waiting.splice(0)) waiter.reject(error);
    this.#socket.destroy();
  }
}
