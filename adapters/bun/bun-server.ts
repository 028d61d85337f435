import process from 'node:process';
import { accessSync, constants } from 'node:fs';
import { dirname } from 'node:path';
import { drainWithinGrace } from '../server-kit/drain-within-grace.ts';
import { listeningUrl } from '../server-kit/gateway-announcement.ts';
import type { ServerSettings } from '../server-kit/server-environment.ts';
import { startStandaloneServer } from '../server-kit/standalone-server.ts';
import type { ServedGateway } from '../server-kit/start-gateway-process.ts';
import { StartupError } from '../shared/startup-error.ts';

/** How the Bun server starts; every field defaults from the environment. */
export interface BunServerOptions {
  environment?: Record<string, string | undefined>;
  port?: number;
  hostname?: string;
}

/** The gateway served by `Bun.serve`. */
interface BunServedGateway extends ServedGateway {
  port: number;
}

/** A started Bun gateway server. */
export interface BunGatewayServer {
  /** Where it listens, as a client calls it. */
  url: string;
  /** The port it listens on (the one the system chose when PORT is 0). */
  port: number;
  /** Stops as SIGTERM does: drain, flush usage and spans, then exit the process with 0. */
  stop(): Promise<void>;
}

/**
 * Seconds a connection may stay without a byte either way: Bun's maximum. Its default (10 s) would cut a
 * non-streaming answer a model takes longer than that to write; the gateway bounds its upstream calls itself.
 */
const idleTimeoutSeconds = 255;

/** Whether this process may create or write files at `path` (the nearest existing ancestor when it does not exist). */
function mayWrite(path: string): boolean {
  for (let candidate = path; ; candidate = dirname(candidate)) {
    try {
      accessSync(candidate, constants.W_OK);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(candidate) === candidate) return false;
    }
  }
}

/** `Bun.serve` at the settings' address; its start failures as start-up errors naming PORT or HOST. */
function serveOnBun(
  fetch: (request: Request) => Response | Promise<Response>,
  settings: ServerSettings,
): BunServedGateway {
  const { port, hostname, shutdownGraceMs } = settings;
  let httpServer: Bun.Server;
  try {
    httpServer = Bun.serve({
      port,
      hostname,
      idleTimeout: idleTimeoutSeconds,
      fetch: (request) => fetch(request),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (code === 'EADDRINUSE') throw new StartupError('PORT', `port ${port} on ${hostname} is already in use`);
    if (code === 'EACCES')
      throw new StartupError('PORT', `permission denied to listen on port ${port} (ports below 1024 need privileges)`);
    if (code === 'EADDRNOTAVAIL') throw new StartupError('HOST', `cannot listen on "${hostname}"`);
    throw error;
  }
  let accepting = true;
  return {
    port: httpServer.port,
    url: listeningUrl(hostname, httpServer.port),
    isAccepting: () => accepting,
    async drain() {
      accepting = false;
      const complete = await drainWithinGrace(httpServer.stop(), shutdownGraceMs);
      if (!complete) await httpServer.stop(true);
      return { complete };
    },
  };
}

/**
 * Serves the gateway with `Bun.serve` on the server kit's lifecycle (adapters/server-kit/standalone-server.ts), as the
 * Deno server does: upstream calls through Bun's fetch; keys, limits, budgets, the usage ledger and stored responses in
 * Postgres (`DATABASE_URL`) or the embedded SQLite (`node:sqlite`, on a worker thread) or PGlite in `TORII_DATA_DIR`;
 * Upstash Redis over REST shared by every instance; JSON logs and `GET /metrics`.
 *
 * SIGTERM and SIGINT: stop accepting (`/health/ready` answers 503), let in-flight requests finish (up to
 * `TORII_SHUTDOWN_GRACE_MS`), push pending budget spend, flush the usage queue (5 s, then the rest is spilled to
 * disk), close the database, exit 0.
 *
 * @example
 * // bun adapters/bun/server.ts
 * await startBunServer({ port: 8787 });
 */
export async function startBunServer(options: BunServerOptions = {}): Promise<BunGatewayServer> {
  const environment = { ...(options.environment ?? process.env) };
  if (options.port !== undefined) environment.PORT = String(options.port);
  if (options.hostname !== undefined) environment.HOST = options.hostname;
  const started = await startStandaloneServer({
    name: 'bun',
    environment,
    readTextFile: (path) => Bun.file(path).text(),
    mayWrite,
    writeAccessHint: 'let the process write to TORII_DATA_DIR',
    unrefTimer: (timer) => timer.unref(),
    serve: (fetch, settings) => Promise.resolve(serveOnBun(fetch, settings)),
    onStopSignal(listener) {
      process.on('SIGTERM', listener);
      process.on('SIGINT', listener);
    },
    exit: (code) => process.exit(code),
  });
  return { url: started.server.url, port: started.server.port, stop: started.stop };
}
