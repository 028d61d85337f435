// Builds what the package ships:
//   dist/server.js        the Node server (cluster primary + workers), self-contained ESM (and dist/server-chunks/)
//   dist/lib/*.js         the library entries (package.json "exports"), peer dependencies left as imports
//   dist/types/**.d.ts    their type declarations (the Deno entry's from scripts/build-deno-types.mjs)
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { expandConfigTypes } from './build-config-types.mjs';
import { emitDenoTypes } from './build-deno-types.mjs';

rmSync('dist', { recursive: true, force: true });

// The packages the library imports rather than bundles: its peer dependencies (hono, the drivers).
const { peerDependencies } = JSON.parse(readFileSync('package.json', 'utf8'));
const peerPackages = Object.keys(peerDependencies).flatMap((name) => [name, `${name}/*`]);

// CommonJS dependencies (prom-client) call require() on Node built-ins; give the ESM bundle a real require.
const requireShim =
  "import { createRequire as __toriiCreateRequire } from 'node:module'; const require = __toriiCreateRequire(import.meta.url);";

await build({
  // The usage thread's program is an entry of its own, beside server.js (adapters/node/postgres-usage-thread.ts).
  entryPoints: {
    server: 'adapters/node/server.ts',
    'postgres-usage-thread-main': 'adapters/node/postgres-usage-thread-main.ts',
  },
  outdir: 'dist',
  bundle: true,
  // What is loaded only when a setting asks for it (the Postgres and PGlite drivers) stays in chunks of its own, so a
  // server without them installed never resolves them.
  splitting: true,
  chunkNames: 'server-chunks/[name]-[hash]',
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: true,
  // PGlite loads its WebAssembly and data files from beside its own module: it must stay a package import.
  // gpt-tokenizer's vocabularies (3.6 MB) are loaded on the first token count, not parsed by every process at start.
  external: ['@electric-sql/pglite', 'gpt-tokenizer'],
  // The package's `bin` (npx torii-gateway): a shebang before the shim.
  banner: { js: `#!/usr/bin/env node\n${requireShim}` },
  logLevel: 'warning',
});

await build({
  entryPoints: {
    index: 'adapters/library/index.ts',
    accounting: 'adapters/library/accounting.ts',
    node: 'adapters/node/index.ts',
    'node-handler': 'adapters/node/node-request-handler.ts',
    cloudflare: 'adapters/cloudflare/worker.ts',
    deno: 'adapters/deno/index.ts',
    bun: 'adapters/bun/index.ts',
    'drivers/redis': 'adapters/drivers/redis.ts',
    'drivers/upstash': 'adapters/drivers/upstash.ts',
    'drivers/postgres': 'adapters/drivers/postgres.ts',
    'drivers/workers-kv': 'adapters/drivers/workers-kv.ts',
    'drivers/durable-object': 'adapters/drivers/durable-object.ts',
  },
  outdir: 'dist/lib',
  bundle: true,
  splitting: true,
  platform: 'neutral',
  format: 'esm',
  target: 'es2023',
  // zod, aws4fetch and yaml are bundled (a few hundred KB of what the gateway uses, where zod's package alone is
  // 7.7 MB); hono and the drivers stay imports of the host's packages (peer dependencies, see package.json).
  mainFields: ['module', 'main'],
  external: [...peerPackages, 'node:*', 'cloudflare:*'],
  sourcemap: false,
  logLevel: 'warning',
});

execFileSync('tsc', ['-p', 'tsconfig.build.json'], { stdio: 'inherit' });
// The config's types are inferred from its zod schemas; spelled out, the declarations need no zod (it is bundled).
expandConfigTypes('dist/types/src/config/config-schema.d.ts');
emitDenoTypes();
console.log('built dist/server.js, dist/lib and dist/types');
