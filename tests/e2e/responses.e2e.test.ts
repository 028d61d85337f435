import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAccountingGateway } from './accounting-harness.ts';
import { startDenoAccountingGateway } from './deno-accounting-harness.ts';
import { defineResponsesE2ESuite } from './responses-e2e-suite.ts';
import { startWorkerdAccountingGateway } from './workerd-accounting-harness.ts';

// Stored responses need a database: every runtime runs here with one (Postgres; Hyperdrive on workerd).
defineResponsesE2ESuite('Node (dist/server.js, cluster of 2, Postgres)', (options) => startAccountingGateway(options));
defineResponsesE2ESuite('Cloudflare Workers (workerd via wrangler dev, Hyperdrive)', (options) =>
  startWorkerdAccountingGateway({
    ...options,
    persistDirectory: mkdtempSync(join(tmpdir(), 'torii-e2e-responses-workerd-')),
  }),
);
defineResponsesE2ESuite('Deno (Deno.serve, Postgres)', (options) => startDenoAccountingGateway(options));
