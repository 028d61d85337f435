import { createServer, Socket } from 'node:net';

/**
 * A TCP proxy to Redis whose open connections can be frozen: bytes stop flowing both ways but neither socket closes,
 * as with a network fault that leaves a half-open connection. Connections made afterwards flow normally.
 */
export async function startFreezableProxy(target: URL) {
  const pairs: { client: Socket; upstream: Socket; frozen: boolean }[] = [];
  const server = createServer((client) => {
    const upstream = new Socket();
    const pair = { client, upstream, frozen: false };
    pairs.push(pair);
    upstream.connect(Number(target.port), target.hostname);
    client.on('data', (chunk) => pair.frozen || upstream.write(chunk));
    upstream.on('data', (chunk) => pair.frozen || client.write(chunk));
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', closeBoth).on('close', closeBoth);
    upstream.on('error', closeBoth).on('close', closeBoth);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
  return {
    port: address.port,
    freezeOpenConnections() {
      for (const pair of pairs) pair.frozen = true;
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
