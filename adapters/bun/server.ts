import process from 'node:process';
import { formatStartupFailure } from '../shared/startup-error.ts';
import { startBunServer } from './bun-server.ts';

// `bun adapters/bun/server.ts` (or `bash scripts/start-bun.sh`)
try {
  await startBunServer();
} catch (error) {
  // One line naming the setting and the reason (a stack trace only for an unexpected error, inside the line).
  console.error(formatStartupFailure(error));
  process.exit(1);
}
