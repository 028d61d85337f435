import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineGatewayE2ESuite } from './gateway-e2e-suite.ts';
import { freePort, spawnGateway } from './gateway-process.ts';

// The built server (`pnpm build` runs before the tests) in cluster mode with two workers.
defineGatewayE2ESuite('Node (dist/server.js, cluster of 2)', async (config, environment) => {
  const directory = mkdtempSync(join(tmpdir(), 'torii-e2e-node-'));
  const configPath = join(directory, 'torii.config.json');
  writeFileSync(configPath, JSON.stringify(config));
  const port = await freePort();
  return await spawnGateway(process.execPath, ['dist/server.js'], {
    env: { ...environment, TORII_CONFIG: configPath, PORT: String(port), HOST: '127.0.0.1', TORII_WORKERS: '2' },
    port,
    readyTimeoutMs: 20_000,
  });
});
