/// <reference lib="deno.ns" />
import { formatStartupFailure } from '../shared/startup-error.ts';
import { startDenoServer } from './deno-server.ts';

// `deno run --allow-net --allow-env --allow-read --allow-write adapters/deno/server.ts`
try {
  await startDenoServer();
} catch (error) {
  // One line naming the setting and the reason (a stack trace only for an unexpected error, inside the line).
  console.error(formatStartupFailure(error));
  Deno.exit(1);
}
