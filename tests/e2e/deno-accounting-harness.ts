import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { mockUpstreamApiKey } from '../mock-upstream/mock-upstream.ts';
import { accountingGatewayConfig, accountingMasterKey } from './accounting-harness.ts';
import { freePort, spawnGateway, type RunningGateway } from './gateway-process.ts';

/**
 * Starting the Deno server (`deno run adapters/deno/server.ts`, the TypeScript sources on the real Deno runtime) with
 * the accounting config of the Node e2e tests, so their helpers (admin calls, keys, load, ledger counts) apply as
 * they are.
 */

/**
 * The Deno executable of the `deno` package itself, not `node_modules/.bin/deno`: that shim runs Node, which runs
 * Deno as a child, so a signal sent to it (SIGTERM) kills the wrapper and never reaches the server.
 */
export function denoExecutable(): string {
  const executable = join(dirname(createRequire(import.meta.url).resolve('deno/package.json')), 'deno');
  if (!existsSync(executable))
    throw new Error(`${executable} is missing: run pnpm install (its postinstall fetches it).`);
  return executable;
}

/** The permissions the README gives the Deno server. */
export const denoServerPermissions = ['--allow-net', '--allow-env', '--allow-read', '--allow-write'];

/** How to start one Deno (or Bun) gateway. */
export interface DenoAccountingGatewayOptions {
  /**
   * `bun` runs the same standalone server on Bun (`bun adapters/bun/server.ts`: the server kit's one lifecycle), so a
   * fleet can mix the two; default `deno`.
   */
  runtime?: 'deno' | 'bun';
  mockUrl: string;
  /** Omit to run on PGlite in the data directory. */
  databaseUrl?: string;
  /** The Upstash REST endpoint (the test bridge in front of the real Redis); omit to run without a shared cache. */
  upstash?: { url: string; token: string };
  rateLimitMode?: 'leased' | 'strict' | 'local';
  /** TORII_DATA_DIR (default: a fresh directory). */
  dataDirectory?: string;
  /** Deno permissions (default {@link denoServerPermissions}). */
  permissions?: string[];
  environment?: Record<string, string>;
}

/** Starts the Deno (or Bun) server and waits until `/health/ready` answers 200. */
export async function startDenoAccountingGateway(options: DenoAccountingGatewayOptions): Promise<RunningGateway> {
  const directory = mkdtempSync(join(tmpdir(), 'torii-e2e-deno-accounting-'));
  const configPath = join(directory, 'torii.config.json');
  writeFileSync(configPath, JSON.stringify(accountingGatewayConfig(options.mockUrl)));
  const port = await freePort();
  const [command, args] =
    options.runtime === 'bun'
      ? ['node_modules/bun/bin/bun.exe', ['adapters/bun/server.ts']]
      : [denoExecutable(), ['run', ...(options.permissions ?? denoServerPermissions), 'adapters/deno/server.ts']];
  return await spawnGateway(command, args, {
    env: {
      MOCK_UPSTREAM_KEY: mockUpstreamApiKey,
      TORII_MASTER_KEY: accountingMasterKey,
      TORII_CONFIG: configPath,
      PORT: String(port),
      HOST: '127.0.0.1',
      DENO_NO_UPDATE_CHECK: '1',
      DATABASE_URL: options.databaseUrl ?? '',
      UPSTASH_REDIS_REST_URL: options.upstash?.url ?? '',
      UPSTASH_REDIS_REST_TOKEN: options.upstash?.token ?? '',
      TORII_RATE_LIMIT_MODE: options.rateLimitMode ?? '',
      ...(options.dataDirectory === undefined ? {} : { TORII_DATA_DIR: options.dataDirectory }),
      ...options.environment,
    },
    port,
    readyTimeoutMs: 60_000,
  });
}
