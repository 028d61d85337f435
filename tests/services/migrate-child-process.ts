/**
 * A process that migrates one database, for the concurrent-start test: `node migrate-child-process.ts <url>
 * <migrations folder>`. Once loaded it prints `ready` and waits for a line on stdin, so the parent can release all
 * children at the same moment; then it migrates, prints `migrated` and exits 0, or prints the error and exits 1.
 */
import { createInterface } from 'node:readline';
import { migratePostgres } from '../../adapters/shared/database-migrate.ts';

const [url, folder] = process.argv.slice(2);
if (!url || !folder) {
  console.error('usage: migrate-child-process.ts <url> <migrations folder>');
  process.exit(2);
}
const lines = createInterface({ input: process.stdin });
const go = new Promise<void>((resolve) => lines.once('line', () => resolve()));
console.log('ready');
await go;
lines.close();
try {
  await migratePostgres(url, folder);
  console.log('migrated');
} catch (error) {
  console.error(error);
  process.exit(1);
}
