/// <reference lib="deno.ns" />
import { ConfigError } from '../../src/config/config-error.ts';
import { startDenoServer } from './deno-server.ts';

// `deno run --allow-net --allow-env --allow-read --allow-write adapters/deno/server.ts`
try {
  await startDenoServer();
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  Deno.exit(1);
}
