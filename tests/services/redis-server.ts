import { connect } from 'node:net';
import { findFreePort } from './free-port.ts';
import { startServiceProcess, waitUntilReady } from './service-process.ts';

/** A throwaway Redis server for one test run. */
export interface TestRedisServer {
  /** `redis://127.0.0.1:<port>` */
  url: string;
  stop(): Promise<void>;
}

/** True when a Redis server answers PING on `port`. */
async function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    const done = (ready: boolean): void => {
      socket.destroy();
      resolve(ready);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

/** Starts `redis-server` on a free port of 127.0.0.1 with no persistence (no RDB, no AOF, nothing written to disk). */
export async function startTestRedis(): Promise<TestRedisServer> {
  const port = await findFreePort();
  const command = process.env.TORII_REDIS_SERVER ?? 'redis-server';
  const server = await startServiceProcess(command, [
    ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    ...['--protected-mode', 'no', '--loglevel', 'warning'],
  ]).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(
        `Tests need a Redis server, but \`${command}\` was not found on PATH. Install it with ` +
          '`apt-get install redis-server` (Debian/Ubuntu; `bash scripts/services.sh` does it as root), set ' +
          'TORII_REDIS_SERVER to its path, or set TORII_TEST_REDIS_URL to a running server.',
        { cause: error },
      );
    }
    throw error;
  });
  try {
    await waitUntilReady('redis-server', server, () => answersPing(port));
  } catch (error) {
    await server.stop('SIGKILL');
    throw error;
  }
  return { url: `redis://127.0.0.1:${port}`, stop: () => server.stop('SIGTERM') };
}
