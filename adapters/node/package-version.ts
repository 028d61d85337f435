import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The version of the installed torii-gateway package: from the nearest package.json named `torii-gateway` above this
 * module (`dist/server.js` in the package, `adapters/node/` in a clone); `unknown` when there is none.
 */
export function packageVersion(from: string = fileURLToPath(import.meta.url)): string {
  let directory = dirname(from);
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (manifest.name === 'torii-gateway' && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // no package.json here (or not readable): keep walking up
    }
    const parent = dirname(directory);
    if (parent === directory) return 'unknown';
    directory = parent;
  }
}
