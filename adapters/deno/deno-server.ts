/// <reference lib="deno.ns" />
import { builtinProviders } from '../../providers/index.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { createGateway } from '../../src/gateway.ts';
import { createFetchUpstream } from '../../src/routes/fetch-upstream.ts';
import { loadGatewayConfig } from '../shared/load-gateway-config.ts';
import { resolveMasterKey } from '../shared/resolve-master-key.ts';

/** How the Deno server starts; every field defaults from the environment. */
export interface DenoServerOptions {
  environment?: Record<string, string | undefined>;
  port?: number;
  hostname?: string;
}

/**
 * Serves the gateway with `Deno.serve` (upstream calls through Deno's fetch, which pools connections). Config comes
 * from `TORII_CONFIG` or the embedded defaults; SIGTERM and SIGINT stop accepting and let in-flight requests finish.
 *
 * @example
 * // deno run --allow-net --allow-env --allow-read adapters/deno/server.ts
 * await startDenoServer({ port: 8787 });
 */
export async function startDenoServer(options: DenoServerOptions = {}): Promise<Deno.HttpServer> {
  const environment = options.environment ?? Deno.env.toObject();
  const { config, source } = await loadGatewayConfig(environment, builtinProviders, (path) => Deno.readTextFile(path));
  const masterKey = resolveMasterKey(environment);
  let accepting = true;
  const app = createGateway({
    config,
    providers: builtinProviders,
    authenticator: createMasterKeyAuthenticator(masterKey.key),
    services: { upstreamFetch: createFetchUpstream(), isReady: () => accepting },
  });
  const port = options.port ?? Number(environment.PORT ?? 8787);
  const hostname = options.hostname ?? environment.HOST ?? '0.0.0.0';
  const server = Deno.serve({ port, hostname, onListen: () => {} }, app.fetch);
  console.log(
    JSON.stringify({
      level: 'info',
      message: `torii listening on http://${hostname === '0.0.0.0' ? 'localhost' : hostname}:${port}`,
      runtime: 'deno',
      config: source,
      modelGroups: Object.keys(config.modelGroups),
      ...(masterKey.generated
        ? { masterKey: masterKey.key, note: 'generated for this run; set TORII_MASTER_KEY to choose one' }
        : {}),
    }),
  );
  const stop = (): void => {
    if (!accepting) return;
    accepting = false;
    void server.shutdown().then(() => Deno.exit(0));
  };
  Deno.addSignalListener('SIGTERM', stop);
  Deno.addSignalListener('SIGINT', stop);
  return server;
}
