import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mockUpstreamApiKey } from '../mock-upstream/mock-upstream.ts';
import { accountingGatewayConfig, accountingMasterKey } from './accounting-harness.ts';
import { freePort, spawnGateway, type RunningGateway } from './gateway-process.ts';
import { wranglerDevArguments } from './gateway-starters.ts';

/** The test Wrangler config: the Worker with KV, the Durable Object, Hyperdrive and the usage Queue. */
const configPath = fileURLToPath(new URL('./workerd-accounting.wrangler.toml', import.meta.url));

/** How to start one Worker with the full gateway under `wrangler dev`. */
export interface WorkerdAccountingOptions {
  mockUrl: string;
  /** The Postgres the Hyperdrive binding points at. */
  databaseUrl: string;
  /**
   * The local state (KV, Durable Object storage) of `wrangler dev`; two instances given the same directory share KV,
   * as two locations of one account share a namespace.
   */
  persistDirectory: string;
  /** Extra vars (TORII_RATE_LIMIT_MODE, TORII_KEY_CACHE_TTL_MS ...). */
  environment?: Record<string, string>;
}

/** Hyperdrive's local connection string must carry a password; the test server trusts local connections anyway. */
function withPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password === '') parsed.password = 'unused';
  return parsed.toString();
}

/**
 * Starts `wrangler dev --local` on the accounting test config, with the accounting gateway config of the Node tests
 * (accounting-harness.ts), and waits until it answers.
 */
export async function startWorkerdAccountingGateway(options: WorkerdAccountingOptions): Promise<RunningGateway> {
  const directory = mkdtempSync(join(tmpdir(), 'torii-e2e-workerd-accounting-'));
  const environmentFile = join(directory, '.env');
  const variables = {
    TORII_MASTER_KEY: accountingMasterKey,
    MOCK_UPSTREAM_KEY: mockUpstreamApiKey,
    TORII_CONFIG: JSON.stringify(accountingGatewayConfig(options.mockUrl)),
    ...options.environment,
  };
  writeFileSync(
    environmentFile,
    `${Object.entries(variables)
      .map(([name, value]) => `${name}='${value}'`)
      .join('\n')}\n`,
  );
  const port = await freePort();
  // Each instance gets its own devtools port: two `wrangler dev` started at once both pick the default 9229 when it
  // is free, and the second then fails with "Address already in use".
  const inspectorPort = await freePort();
  return await spawnGateway(
    'node_modules/.bin/wrangler',
    wranglerDevArguments({
      port,
      inspectorPort,
      environmentFile,
      persistDirectory: options.persistDirectory,
      configPath,
    }),
    {
      env: {
        WRANGLER_SEND_METRICS: 'false',
        CI: 'true',
        CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_HYPERDRIVE: withPassword(options.databaseUrl),
      },
      port,
      readyTimeoutMs: 90_000,
    },
  );
}
