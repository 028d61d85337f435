/// <reference lib="deno.ns" />
import { drainWithinGrace } from '../server-kit/drain-within-grace.ts';
import { listeningUrl } from '../server-kit/gateway-announcement.ts';
import type { ServerSettings } from '../server-kit/server-environment.ts';
import { startStandaloneServer } from '../server-kit/standalone-server.ts';
import type { ServedGateway } from '../server-kit/start-gateway-process.ts';
import { StartupError } from '../shared/startup-error.ts';

/** How the Deno server starts; every field defaults from the environment. */
export interface DenoServerOptions {
  environment?: Record<string, string | undefined>;
  port?: number;
  hostname?: string;
}

/** The gateway served by `Deno.serve`. */
interface DenoServedGateway extends ServedGateway {
  httpServer: Deno.HttpServer;
}

/** `Deno.serve` at the settings' address; its start failures as start-up errors naming PORT or HOST. */
function serveOnDeno(
  fetch: (request: Request) => Response | Promise<Response>,
  settings: ServerSettings,
): DenoServedGateway {
  const { port, hostname, shutdownGraceMs } = settings;
  let httpServer: Deno.HttpServer;
  try {
    httpServer = Deno.serve({ port, hostname, onListen: () => {} }, (request) => fetch(request));
  } catch (error) {
    const name = (error as Error | undefined)?.name;
    if (name === 'AddrInUse') throw new StartupError('PORT', `port ${port} on ${hostname} is already in use`);
    if (name === 'PermissionDenied' && !String((error as Error).message).includes('--allow'))
      throw new StartupError('PORT', `permission denied to listen on port ${port} (ports below 1024 need privileges)`);
    if (name === 'AddrNotAvailable') throw new StartupError('HOST', `cannot listen on "${hostname}"`);
    throw error;
  }
  let accepting = true;
  return {
    httpServer,
    url: listeningUrl(hostname, port),
    isAccepting: () => accepting,
    async drain() {
      accepting = false;
      const complete = await drainWithinGrace(httpServer.shutdown(), shutdownGraceMs);
      return { complete };
    },
  };
}

/**
 * Serves the gateway with `Deno.serve` on the server kit's lifecycle (adapters/server-kit/standalone-server.ts):
 * upstream calls through Deno's fetch, which pools connections; keys, limits, budgets, the usage ledger and the
 * Responses API's stored responses as in a Node single process: Postgres (`DATABASE_URL`) or the embedded SQLite or
 * PGlite on local disk (with `--allow-write`), and Upstash Redis over REST (`UPSTASH_REDIS_REST_URL`,
 * `UPSTASH_REDIS_REST_TOKEN`) shared by every instance, circuit breakers included (within `TORII_CIRCUIT_REFRESH_MS`,
 * 1 s). Without a database no response is stored.
 *
 * SIGTERM and SIGINT: stop accepting (`/health/ready` answers 503), let in-flight requests finish (up to
 * `TORII_SHUTDOWN_GRACE_MS`), push pending budget spend, flush the usage queue (5 s, then the rest is spilled to
 * disk), close the database, exit 0.
 *
 * @example
 * // deno run --allow-net --allow-env --allow-read --allow-write adapters/deno/server.ts
 * await startDenoServer({ port: 8787 });
 */
export async function startDenoServer(options: DenoServerOptions = {}): Promise<Deno.HttpServer> {
  const environment = { ...(options.environment ?? Deno.env.toObject()) };
  if (options.port !== undefined) environment.PORT = String(options.port);
  if (options.hostname !== undefined) environment.HOST = options.hostname;
  const started = await startStandaloneServer({
    name: 'deno',
    environment,
    readTextFile: (path) => Deno.readTextFile(path),
    mayWrite: (path) => Deno.permissions.querySync({ name: 'write', path }).state === 'granted',
    writeAccessHint: 'deno run --allow-write',
    unrefTimer: (timer) => Deno.unrefTimer(timer),
    serve: (fetch, settings) => Promise.resolve(serveOnDeno(fetch, settings)),
    onStopSignal(listener) {
      Deno.addSignalListener('SIGTERM', listener);
      Deno.addSignalListener('SIGINT', listener);
    },
    exit: (code) => Deno.exit(code),
  });
  return started.server.httpServer;
}
