import { createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

/**
 * The benchmark floor: the least a Node proxy can do. A `node:http` server forwards every request to one upstream
 * origin through an undici `Pool` with keep-alive and pipes both bodies through untouched: no JSON parsing, no auth,
 * no routing. The gateway runs the same runtime and the same upstream client, so its distance to this floor is what
 * the gateway itself costs.
 *
 * Run it alone with `PORT=4100 BENCH_UPSTREAM_URL=http://127.0.0.1:4000 node bench/bench-floor-proxy.ts`. When it
 * stands in for the gateway (`TORII_BENCH_COMMAND`), it reads the upstream from `BENCH_UPSTREAM_URL` too.
 */

/** Headers that describe one hop's connection and must not be forwarded (RFC 9110 section 7.6.1), plus `host`. */
const hopByHopHeaders = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
]);

function forwardableHeaders(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): OutgoingHttpHeaders {
  const forwarded: OutgoingHttpHeaders = {};
  for (const name in headers) {
    if (!hopByHopHeaders.has(name)) forwarded[name] = headers[name];
  }
  return forwarded;
}

const badGatewayBody = Buffer.from('{"error":{"message":"floor proxy: upstream request failed","type":"api_error"}}');

/**
 * Starts the floor proxy in front of `upstreamURL` (an origin such as `http://127.0.0.1:4000`; its path is ignored,
 * request paths are forwarded as they are).
 *
 * @example
 * const server = await startFloorProxy({ port: 0, upstreamURL: 'http://127.0.0.1:4000' });
 */
export async function startFloorProxy(options: { port: number; upstreamURL: string; host?: string }): Promise<Server> {
  const pool = new Pool(new URL(options.upstreamURL).origin, {
    connections: 256,
    pipelining: 1,
    keepAliveTimeout: 30_000,
  });

  const server = createServer(async (request, response) => {
    try {
      const upstream = await pool.request({
        path: request.url ?? '/',
        method: request.method as 'GET',
        headers: forwardableHeaders(request.headers) as Record<string, string>,
        body: request.method === 'GET' || request.method === 'HEAD' ? null : request,
      });
      response.writeHead(upstream.statusCode, forwardableHeaders(upstream.headers));
      // `pipe` with explicit error and close handling, not `await pipeline()` from node:stream/promises: on Node 24
      // the promise pipeline halves this proxy's throughput (about 8k vs 16k rps on one core, keep-alive intact).
      const body = upstream.body;
      body.on('error', () => response.destroy());
      response.on('close', () => {
        if (!response.writableFinished) body.destroy();
      });
      body.pipe(response);
    } catch {
      if (!response.headersSent) {
        response.writeHead(502, { 'content-type': 'application/json', 'content-length': badGatewayBody.length });
        response.end(badGatewayBody);
      } else {
        response.destroy();
      }
    }
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.on('close', () => void pool.close());
  await new Promise<void>((resolve) => server.listen(options.port, options.host ?? '127.0.0.1', resolve));
  return server;
}

if (import.meta.main) {
  const upstreamURL = process.env.BENCH_UPSTREAM_URL;
  if (upstreamURL === undefined) {
    process.stderr.write('bench floor proxy: set BENCH_UPSTREAM_URL to the upstream origin\n');
    process.exit(2);
  }
  const server = await startFloorProxy({ port: Number(process.env.PORT ?? 4100), upstreamURL });
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`bench floor proxy listening on http://127.0.0.1:${port} -> ${upstreamURL}\n`);
  process.on('SIGTERM', () => {
    server.close(() => process.exit(0));
    server.closeIdleConnections();
  });
}
