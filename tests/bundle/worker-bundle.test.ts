import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

/**
 * Packages that must never be in a Worker: each needs Node's own sockets, files or native code. postgres-js is
 * allowed only as its `workerd` build (`postgres/cf/`, over `cloudflare:sockets`); its Node builds (`src/`, `cjs/`)
 * are not. Drizzle is allowed only with its postgres-js driver.
 */
const nodeOnly =
  /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?(?:undici|prom-client|@hono\/node-server|ioredis|pg|pg-[a-z-]+|yaml|@electric-sql\/pglite|postgres\/(?:src|cjs)|drizzle-orm\/(?:node-postgres|pglite))[@/]/;

/** The Worker entry bundled as wrangler does (ESM, workerd conditions, minified, runtime modules left external). */
async function bundleWorker(options: { splitting: boolean }) {
  return await build({
    entryPoints: ['adapters/cloudflare/worker.ts'],
    bundle: true,
    write: false,
    outdir: 'dist/worker-bundle-test',
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['workerd', 'worker', 'browser'],
    external: ['node:*', 'cloudflare:*'],
    minify: true,
    splitting: options.splitting,
    metafile: true,
    logLevel: 'silent',
  });
}

/** The entry chunk and every chunk it imports statically: what a Worker evaluates at start. */
function eagerOutputs(metafile: Metafile): Metafile['outputs'][string][] {
  const outputs = metafile.outputs;
  const entry = Object.keys(outputs).find((path) => outputs[path]?.entryPoint === 'adapters/cloudflare/worker.ts');
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const imported of outputs[path]?.imports ?? [])
      if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
  };
  if (entry !== undefined) visit(entry);
  return [...seen].flatMap((path) => outputs[path] ?? []);
}

// Nothing Node-only may enter the Worker, and it must stay small (zod is imported as a namespace so its locales
// tree-shake away). The bound: the gateway alone is ~215 KB minified since it speaks four client APIs (OpenAI chat,
// embeddings and Responses, Anthropic Messages; it was ~140 KB with the first two); the database code a bound
// database loads (Drizzle's pg-core ~95 KB, postgres-js's workerd build ~45 KB) and the accounting (~55 KB) bring it
// to ~410 KB, ~441 KB with routing and the OpenAI-compatible presets. The cloud providers (Gemini 18.7 KB, Vertex AI
// 11.8, Bedrock 21.0 with aws4fetch's signer 6.1, Azure OpenAI 5.3, Cohere 12.2, their shared token code 3.4) add
// ~79 KB, each a chunk a Worker loads only when its config names that provider; the LiteLLM config converter ~20 KB,
// a chunk loaded only for a LiteLLM config. 600 KiB leaves room to grow and still fails when a Node-only client
// slips in (undici alone is ~300 KB, ioredis ~150 KB). Workers accept 3 MiB
// (free) or 10 MiB (paid) compressed; startup parses it in a few ms.
describe('the Cloudflare Worker bundle', () => {
  it('contains no Node-only package (postgres-js only as its workerd build) and stays under 600 KiB minified', async () => {
    const result = await bundleWorker({ splitting: false });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((input) => nodeOnly.test(input))).toEqual([]);
    expect(inputs.some((input) => input.startsWith('adapters/node/'))).toBe(false);
    expect(inputs.some((input) => input.startsWith('adapters/shared/database'))).toBe(false);
    expect(inputs.some((input) => /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?postgres\/cf\//.test(input))).toBe(
      true,
    );
    const bytes = result.outputFiles.reduce((sum, file) => sum + file.contents.byteLength, 0);
    expect(bytes).toBeLessThan(600 * 1024);
  });

  it('loads the database code only when a database is bound: a master-key-only Worker evaluates no Drizzle or postgres-js and stays under 256 KiB', async () => {
    const result = await bundleWorker({ splitting: true });
    const eager = eagerOutputs(result.metafile);
    const eagerInputs = eager.flatMap((output) => Object.keys(output.inputs));
    expect(eagerInputs).toContain('adapters/cloudflare/worker-gateway.ts');
    expect(
      eagerInputs.filter((input) =>
        /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?(?:drizzle-orm|postgres)\//.test(input),
      ),
    ).toEqual([]);
    expect(eagerInputs.filter((input) => input.startsWith('src/db/'))).toEqual([]);
    const eagerBytes = eager.reduce((sum, output) => sum + output.bytes, 0);
    // 250 KiB until the provider presets grew to 24 services (1.8 KiB of data every deployment's config resolves
    // against) and the circuit bus of the Durable Object came in; the AWS event-stream decoder is loaded on demand.
    expect(eagerBytes).toBeLessThan(256 * 1024);
  });
});
