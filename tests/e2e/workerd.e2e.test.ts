import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineGatewayE2ESuite } from './gateway-e2e-suite.ts';
import { freePort, spawnGateway } from './gateway-process.ts';

// The Worker entry on the real workerd runtime, through `wrangler dev` (local mode, platform fetch upstream).
defineGatewayE2ESuite('Cloudflare Workers (workerd via wrangler dev)', async (config, environment) => {
  const directory = mkdtempSync(join(tmpdir(), 'torii-e2e-workerd-'));
  const environmentFile = join(directory, '.env');
  const lines = Object.entries({ ...environment, TORII_CONFIG: JSON.stringify(config) }).map(
    ([name, value]) => `${name}='${value}'`,
  );
  writeFileSync(environmentFile, `${lines.join('\n')}\n`);
  const port = await freePort();
  return await spawnGateway(
    'node_modules/.bin/wrangler',
    [
      'dev',
      '--local',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--env-file',
      environmentFile,
      '--persist-to',
      join(directory, 'state'),
      '--show-interactive-dev-session=false',
      '--log-level',
      'warn',
    ],
    { env: { WRANGLER_SEND_METRICS: 'false', CI: 'true' }, port, readyTimeoutMs: 90_000 },
  );
});
