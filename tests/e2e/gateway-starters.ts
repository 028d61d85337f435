import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, nodeReadyLine, spawnGateway, startOnFreePort, type RunningGateway } from './gateway-process.ts';

/** Starts the gateway under test with a config object and its environment. */
export type GatewayStarter = (
  config: Record<string, unknown>,
  environment: Record<string, string>,
) => Promise<RunningGateway>;

/** A runtime the end-to-end and chaos suites run against. */
export interface GatewayRuntime {
  /** Shown in test names. */
  name: string;
  start: GatewayStarter;
}

function writeConfig(prefix: string, config: Record<string, unknown>): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  const configPath = join(directory, 'torii.config.json');
  writeFileSync(configPath, JSON.stringify(config));
  return configPath;
}

/**
 * The built Node server (`pnpm build` runs before the tests) in cluster mode, two workers unless the environment
 * sets `TORII_WORKERS`.
 */
export const nodeClusterRuntime: GatewayRuntime = {
  name: 'Node (dist/server.js, cluster of 2)',
  async start(config, environment) {
    return await startOnFreePort((port) =>
      spawnGateway(process.execPath, ['dist/server.js'], {
        env: {
          TORII_WORKERS: '2',
          ...environment,
          TORII_CONFIG: writeConfig('torii-e2e-node-', config),
          PORT: String(port),
          HOST: '127.0.0.1',
        },
        port,
        readyTimeoutMs: 60_000,
        // One worker answering /health/ready is not the cluster: tests spread over both, so wait until both listen.
        readyLine: nodeReadyLine,
      }),
    );
  },
};

/**
 * The arguments of `wrangler dev --local` on loopback: its own devtools port (two instances started at once would both
 * pick the default 9229), the variables from `environmentFile`, local state in `persistDirectory`.
 */
export function wranglerDevArguments(options: {
  port: number;
  inspectorPort: number;
  environmentFile: string;
  persistDirectory: string;
  configPath?: string;
}): string[] {
  return [
    'dev',
    ...(options.configPath === undefined ? [] : ['--config', options.configPath]),
    '--local',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--inspector-port',
    String(options.inspectorPort),
    '--env-file',
    options.environmentFile,
    '--persist-to',
    options.persistDirectory,
    '--show-interactive-dev-session=false',
  ];
}

/** The Worker entry on the real workerd runtime, through `wrangler dev` (local mode, platform fetch upstream). */
export const workerdRuntime: GatewayRuntime = {
  name: 'Cloudflare Workers (workerd via wrangler dev)',
  async start(config, environment) {
    const directory = mkdtempSync(join(tmpdir(), 'torii-e2e-workerd-'));
    const environmentFile = join(directory, '.env');
    const lines = Object.entries({ ...environment, TORII_CONFIG: JSON.stringify(config) }).map(
      ([name, value]) => `${name}='${value}'`,
    );
    writeFileSync(environmentFile, `${lines.join('\n')}\n`);
    return await startOnFreePort(async (port) => {
      const inspectorPort = await freePort();
      return await spawnGateway(
        'node_modules/.bin/wrangler',
        [
          ...wranglerDevArguments({ port, inspectorPort, environmentFile, persistDirectory: join(directory, 'state') }),
          // `log`: wrangler shows the Worker's `console.log` lines (its access lines) only from this level.
          '--log-level',
          'log',
        ],
        { env: { WRANGLER_SEND_METRICS: 'false', CI: 'true' }, port, readyTimeoutMs: 120_000 },
      );
    });
  },
};

/**
 * Two (or more) Worker instances on workerd, each its own `wrangler dev` with its own isolate, sharing one
 * `ToriiCircuits` Durable Object: the first defines it, the others bind it by the first's script name through
 * wrangler's dev registry, as every isolate of a deployed Worker shares its namespace. Names are unique per call, so
 * suites running at once never bind each other's objects.
 */
export async function startWorkerdPeers(
  config: Record<string, unknown>,
  environment: Record<string, string>,
  count = 2,
): Promise<RunningGateway[]> {
  const directory = mkdtempSync(join(tmpdir(), 'torii-e2e-workerd-peers-'));
  const environmentFile = join(directory, '.env');
  const lines = Object.entries({ ...environment, TORII_CONFIG: JSON.stringify(config) }).map(
    ([name, value]) => `${name}='${value}'`,
  );
  writeFileSync(environmentFile, `${lines.join('\n')}\n`);
  const main = join(process.cwd(), 'adapters/cloudflare/worker.ts');
  const owner = `torii-peer-${randomUUID().slice(0, 8)}`;
  const peers: RunningGateway[] = [];
  try {
    for (let index = 0; index < count; index++) {
      const name = index === 0 ? owner : `${owner}-${index}`;
      const configPath = join(directory, `${name}.toml`);
      writeFileSync(
        configPath,
        [
          `name = "${name}"`,
          `main = ${JSON.stringify(main)}`,
          'compatibility_date = "2026-10-01"',
          'compatibility_flags = ["nodejs_compat"]',
          '[[durable_objects.bindings]]',
          'name = "TORII_CIRCUITS"',
          'class_name = "ToriiCircuits"',
          ...(index === 0 ? [] : [`script_name = "${owner}"`]),
          '[[migrations]]',
          'tag = "v1"',
          'new_sqlite_classes = ["ToriiCircuits", "ToriiKeyCounters"]',
          '',
        ].join('\n'),
      );
      const port = await freePort();
      const inspectorPort = await freePort();
      const persistDirectory = join(directory, `state-${index}`);
      peers.push(
        await spawnGateway(
          'node_modules/.bin/wrangler',
          [
            ...wranglerDevArguments({ port, inspectorPort, environmentFile, persistDirectory, configPath }),
            '--log-level',
            'warn',
          ],
          { env: { WRANGLER_SEND_METRICS: 'false', CI: 'true' }, port, readyTimeoutMs: 120_000 },
        ),
      );
    }
  } catch (error) {
    await Promise.all(peers.map((peer) => peer.stop()));
    throw error;
  }
  return peers;
}

/** The Deno entry (Deno.serve) running the TypeScript sources directly on the real Deno runtime. */
export const denoRuntime: GatewayRuntime = {
  name: 'Deno (Deno.serve)',
  async start(config, environment) {
    // The real binary, not the node_modules/.bin shim: a signal sent to the shim would not reach Deno.
    return await startOnFreePort((port) =>
      spawnGateway(
        'node_modules/deno/deno',
        ['run', '--allow-net', '--allow-env', '--allow-read', '--allow-write', 'adapters/deno/server.ts'],
        {
          env: {
            ...environment,
            TORII_CONFIG: writeConfig('torii-e2e-deno-', config),
            PORT: String(port),
            HOST: '127.0.0.1',
            DENO_NO_UPDATE_CHECK: '1',
          },
          port,
          readyTimeoutMs: 120_000,
        },
      ),
    );
  },
};

/** The Bun entry (Bun.serve) running the TypeScript sources directly on the real Bun runtime (the npm `bun` package). */
export const bunRuntime: GatewayRuntime = {
  name: 'Bun (Bun.serve)',
  async start(config, environment) {
    return await startOnFreePort((port) =>
      spawnGateway('node_modules/bun/bin/bun.exe', ['adapters/bun/server.ts'], {
        env: {
          ...environment,
          TORII_CONFIG: writeConfig('torii-e2e-bun-', config),
          PORT: String(port),
          HOST: '127.0.0.1',
        },
        port,
        readyTimeoutMs: 120_000,
      }),
    );
  },
};

/** Every runtime, in the order the suites run them. */
export const gatewayRuntimes: GatewayRuntime[] = [nodeClusterRuntime, workerdRuntime, denoRuntime];

/**
 * The runtimes with their own HTTP server, Bun included: the suites about what a server does (misbehaving clients,
 * logs, metrics and spans) run on each. The upstream chaos suites run on {@link gatewayRuntimes}, since Bun serves the
 * same request path as Deno (adapters/server-kit/standalone-server.ts), and CI time is bounded.
 */
export const serverRuntimes: GatewayRuntime[] = [...gatewayRuntimes, bunRuntime];
