import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineGatewayE2ESuite } from './gateway-e2e-suite.ts';
import { freePort, spawnGateway } from './gateway-process.ts';

// The Deno entry (Deno.serve) running the TypeScript sources directly on the real Deno runtime.
defineGatewayE2ESuite('Deno (Deno.serve)', async (config, environment) => {
  const directory = mkdtempSync(join(tmpdir(), 'torii-e2e-deno-'));
  const configPath = join(directory, 'torii.config.json');
  writeFileSync(configPath, JSON.stringify(config));
  const port = await freePort();
  return await spawnGateway(
    'node_modules/.bin/deno',
    ['run', '--allow-net', '--allow-env', '--allow-read', '--allow-write', 'adapters/deno/server.ts'],
    {
      env: {
        ...environment,
        TORII_CONFIG: configPath,
        PORT: String(port),
        HOST: '127.0.0.1',
        DENO_NO_UPDATE_CHECK: '1',
      },
      port,
      readyTimeoutMs: 60_000,
    },
  );
});
