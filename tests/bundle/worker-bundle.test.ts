import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

// The Worker entry bundled as wrangler does (ESM, workerd conditions, minified): nothing Node-only may enter it, and it
// must stay small (zod is imported as a namespace so its locales tree-shake away).
describe('the Cloudflare Worker bundle', () => {
  it('contains no Node-only package and stays under 200 KiB minified', async () => {
    const result = await build({
      entryPoints: ['adapters/cloudflare/worker.ts'],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      conditions: ['workerd', 'worker', 'browser'],
      minify: true,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    const forbidden = inputs.filter((input) =>
      /node_modules\/(\.pnpm\/)?(undici|prom-client|@hono\/node-server|ioredis|pg|postgres|yaml)[@/]/.test(input),
    );
    expect(forbidden).toEqual([]);
    expect(inputs.some((input) => input.startsWith('adapters/node/'))).toBe(false);
    const bytes = result.outputFiles.reduce((sum, file) => sum + file.contents.byteLength, 0);
    expect(bytes).toBeLessThan(200 * 1024);
  });
});
