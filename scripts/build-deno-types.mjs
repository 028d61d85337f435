// Emits the declarations of the Deno entry (adapters/deno/index.ts). Its sources use Deno's globals, which the main
// tsconfig leaves out (they clash with @types/node), so they are compiled here against `deno types` with errors
// ignored: what is emitted for adapters/deno/ names Deno's types (`Deno.HttpServer`), which a Deno consumer has.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** Writes dist/types/adapters/deno/*.d.ts (the other declarations come from the main tsc run). */
export function emitDenoTypes() {
  const directory = mkdtempSync(join(tmpdir(), 'torii-deno-types-'));
  try {
    const denoTypes = join(directory, 'deno.d.ts');
    writeFileSync(denoTypes, execFileSync('deno', ['types'], { maxBuffer: 64 * 1024 * 1024 }));
    const root = resolve('.');
    writeFileSync(
      join(directory, 'tsconfig.json'),
      JSON.stringify({
        extends: join(root, 'tsconfig.json'),
        compilerOptions: {
          noEmit: false,
          declaration: true,
          emitDeclarationOnly: true,
          noEmitOnError: false,
          outDir: join(directory, 'out'),
          rootDir: root,
          types: [],
          lib: ['esnext'],
          skipLibCheck: true,
        },
        include: [join(root, 'adapters/deno/index.ts'), denoTypes],
        exclude: [],
      }),
    );
    try {
      execFileSync('tsc', ['-p', join(directory, 'tsconfig.json')], { stdio: 'ignore' });
    } catch {
      // Type errors are expected (no @types/node here); the declarations are emitted regardless.
    }
    cpSync(join(directory, 'out', 'adapters', 'deno'), 'dist/types/adapters/deno', { recursive: true });
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
