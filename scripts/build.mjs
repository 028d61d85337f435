// Builds what the package ships:
//   dist/server.js        the Node server (cluster primary + workers), one self-contained ESM file
//   dist/lib/*.js         the library entries (package.json "exports"), dependencies left as imports
//   dist/types/**.d.ts    their type declarations
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';

rmSync('dist', { recursive: true, force: true });

// CommonJS dependencies (prom-client) call require() on Node built-ins; give the ESM bundle a real require.
const requireShim =
  "import { createRequire as __toriiCreateRequire } from 'node:module'; const require = __toriiCreateRequire(import.meta.url);";

await build({
  entryPoints: { server: 'adapters/node/server.ts' },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: true,
  // PGlite loads its WebAssembly and data files from beside its own module: it must stay a package import.
  // gpt-tokenizer's vocabularies (3.6 MB) are loaded on the first token count, not parsed by every process at start.
  external: ['@electric-sql/pglite', 'gpt-tokenizer'],
  banner: { js: requireShim },
  logLevel: 'warning',
});

await build({
  entryPoints: {
    index: 'adapters/library/index.ts',
    accounting: 'adapters/library/accounting.ts',
    node: 'adapters/node/index.ts',
    cloudflare: 'adapters/cloudflare/worker.ts',
    deno: 'adapters/deno/index.ts',
  },
  outdir: 'dist/lib',
  bundle: true,
  splitting: true,
  platform: 'neutral',
  format: 'esm',
  target: 'es2023',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});

execFileSync('tsc', ['-p', 'tsconfig.build.json'], { stdio: 'inherit' });
console.log('built dist/server.js, dist/lib and dist/types');
