/**
 * A small Upstash Redis REST server in front of a real Redis, so `@upstash/redis` (and the gateway's Upstash cache)
 * is tested against real Redis semantics without the Upstash cloud. It speaks the protocol the client speaks
 * (node_modules/@upstash/redis, `HttpClient.request` and `Pipeline.exec`):
 *
 * - `POST /` with a JSON command array (`["SET","k","v","EX",60]`) answers `{"result": ...}`, or status 400 and
 *   `{"error": "..."}` when Redis answers with an error;
 * - `POST /pipeline` with an array of command arrays answers an array of `{"result"}` / `{"error"}`, one per command,
 *   with status 200 even when some failed (the commands run in order, not atomically);
 * - `POST /multi-exec` runs the commands in MULTI/EXEC on one connection: the same array shape; when a command is
 *   refused while queueing, Redis discards the transaction and the bridge answers 400 with the EXECABORT error;
 * - the command in the path (`GET /set/foo/bar`, `POST /set/foo` with the value as the body), as Upstash's REST API
 *   documents it, for curl-style checks;
 * - `Authorization: Bearer <token>` (or `?_token=`) on every request, 401 and `{"error": "Unauthorized"}` otherwise;
 * - `Upstash-Encoding: base64` (which the client sends by default): bulk strings in results, nested ones in arrays
 *   included, are base64 of their bytes; integers and nils are left as they are, errors are never encoded. Status
 *   replies are encoded too, except "OK", which goes as it is: the client decodes every string but "OK", so encoding
 *   "PONG" or "QUEUED" is what lets it read them back. Without the header, bulk strings are sent as UTF-8 text.
 *
 * Every HTTP request takes a Redis connection of its own from a pool (a transaction's MULTI state, or a blocking
 * command, never leaks into another request). Commands that would change what a pooled connection is
 * (SUBSCRIBE, MONITOR, SELECT, MULTI, AUTH, HELLO, QUIT, ...) are refused with an error, as Upstash refuses them in
 * REST calls. Integer replies beyond 2^53 lose precision (JSON numbers). This is test infrastructure: one token,
 * no TLS, no read-your-writes sync tokens (the client sends them; the bridge ignores them, a single Redis is always
 * consistent).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type RespReply, RespConnection } from './resp-connection.ts';

/** A running bridge. */
export interface UpstashBridge {
  /** `http://127.0.0.1:<port>`, to pass as the client's `url`. */
  url: string;
  token: string;
  close(): Promise<void>;
}

/** What {@link startUpstashBridge} is made with. */
export interface UpstashBridgeOptions {
  /** The Redis behind the bridge (`redis://host:port[/db]`). */
  redisUrl: string;
  /** The bearer token clients must present. */
  token: string;
  /** Defaults to 0: a free port chosen by the OS. */
  port?: number;
}

const refusedCommands = new Set([
  'SUBSCRIBE',
  'PSUBSCRIBE',
  'SSUBSCRIBE',
  'UNSUBSCRIBE',
  'PUNSUBSCRIBE',
  'SUNSUBSCRIBE',
  'MONITOR',
  'SELECT',
  'SWAPDB',
  'MULTI',
  'EXEC',
  'DISCARD',
  'WATCH',
  'UNWATCH',
  'AUTH',
  'HELLO',
  'QUIT',
  'RESET',
  'CLIENT',
  'SHUTDOWN',
  'SYNC',
  'PSYNC',
  'REPLICAOF',
  'SLAVEOF',
]);

type CommandArgument = string | Buffer;
type ResultEntry = { result: unknown } | { error: string };

/** A request the bridge answers with 400 and this message. */
class BadRequest extends Error {}

function toCommand(value: unknown): CommandArgument[] {
  if (!Array.isArray(value) || value.length === 0) throw new BadRequest('ERR command must be a non-empty array');
  return value.map((argument) => {
    if (typeof argument === 'string') return argument;
    if (typeof argument === 'number' || typeof argument === 'boolean') return String(argument);
    throw new BadRequest('ERR command arguments must be strings, numbers or booleans');
  });
}

function checkAllowed(command: CommandArgument[]): void {
  const name = command[0]!.toString().toUpperCase();
  if (refusedCommands.has(name)) throw new BadRequest(`ERR command is not allowed: ${name}`);
}

function encodeResult(reply: RespReply, base64: boolean): unknown {
  if (reply === null || typeof reply === 'number') return reply;
  if (Buffer.isBuffer(reply)) return reply.toString(base64 ? 'base64' : 'utf8');
  if (Array.isArray(reply)) return reply.map((item) => encodeResult(item, base64));
  if (reply.kind === 'status')
    return base64 && reply.value !== 'OK' ? Buffer.from(reply.value).toString('base64') : reply.value;
  // An error inside an array (EXEC's results): Upstash's arrays carry values only, so it becomes its message.
  return reply.message;
}

function toEntry(reply: RespReply, base64: boolean): ResultEntry {
  if (reply !== null && typeof reply === 'object' && !Array.isArray(reply) && !Buffer.isBuffer(reply))
    if (reply.kind === 'error') return { error: reply.message };
  return { result: encodeResult(reply, base64) };
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new BadRequest('ERR failed to parse the request body as JSON');
  }
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/**
 * Starts the bridge on 127.0.0.1.
 *
 * @example
 * ```ts
 * const bridge = await startUpstashBridge({ redisUrl: process.env.TORII_TEST_REDIS_URL!, token: 'test-token' });
 * const redis = new Redis({ url: bridge.url, token: bridge.token });
 * await redis.set('key', 'value');
 * await bridge.close();
 * ```
 */
export async function startUpstashBridge(options: UpstashBridgeOptions): Promise<UpstashBridge> {
  const idle: RespConnection[] = [];
  const all = new Set<RespConnection>();

  const withConnection = async <T>(work: (connection: RespConnection) => Promise<T>): Promise<T> => {
    let connection = idle.pop();
    while (connection && !connection.usable) connection = idle.pop();
    if (!connection) {
      connection = await RespConnection.open(options.redisUrl);
      all.add(connection);
    }
    try {
      return await work(connection);
    } finally {
      if (connection.usable) idle.push(connection);
      else all.delete(connection);
    }
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://bridge');
    const authorization = request.headers.authorization ?? '';
    const presented = /^Bearer\s+(.+)$/i.exec(authorization)?.[1] ?? url.searchParams.get('_token');
    if (presented !== options.token) return send(response, 401, { error: 'Unauthorized' });
    if (request.method !== 'POST' && request.method !== 'GET' && request.method !== 'PUT' && request.method !== 'HEAD')
      return send(response, 405, { error: 'Method Not Allowed' });
    const base64 = String(request.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64';
    const body = await readBody(request);

    if (url.pathname === '/pipeline' || url.pathname === '/multi-exec') {
      const parsed = parseJson(body);
      if (!Array.isArray(parsed) || parsed.length === 0)
        throw new BadRequest('ERR the body must be a non-empty array of commands');
      const commands = parsed.map(toCommand);
      commands.forEach(checkAllowed);
      if (url.pathname === '/pipeline') {
        const replies = await withConnection((connection) => connection.send(commands));
        return send(
          response,
          200,
          replies.map((reply) => toEntry(reply, base64)),
        );
      }
      const replies = await withConnection((connection) => connection.send([['MULTI'], ...commands, ['EXEC']]));
      const exec = replies.at(-1)!;
      if (Array.isArray(exec))
        return send(
          response,
          200,
          exec.map((reply) => toEntry(reply, base64)),
        );
      const entry = toEntry(exec, base64);
      return send(
        response,
        'error' in entry ? 400 : 500,
        'error' in entry ? entry : { error: 'ERR transaction aborted' },
      );
    }

    let command: CommandArgument[];
    if (url.pathname === '/') command = toCommand(parseJson(body));
    else {
      command = url.pathname.slice(1).split('/').map(decodeURIComponent);
      if (body.length > 0) command.push(body);
      for (const [name, value] of url.searchParams) if (name !== '_token') command.push(name, value);
    }
    checkAllowed(command);
    const [reply] = await withConnection((connection) => connection.send([command]));
    const entry = toEntry(reply!, base64);
    return send(response, 'error' in entry ? 400 : 200, entry);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (response.headersSent) return response.destroy();
      if (error instanceof BadRequest) return send(response, 400, { error: error.message });
      send(response, 500, { error: `bridge failure: ${String(error)}` });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the bridge has no port');

  return {
    url: `http://127.0.0.1:${address.port}`,
    token: options.token,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      for (const connection of all) connection.close();
      all.clear();
      idle.length = 0;
    },
  };
}
