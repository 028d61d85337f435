/**
 * A consumer of the packed npm package, as a new user has it: `npm pack` of this repository installed with npm in a
 * fresh directory outside the repository, next to the frameworks it is mounted in, and the apps of the README's
 * recipes (tests/e2e/package-consumer/) beside it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, lstatSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../../', import.meta.url);
const recipes = new URL('package-consumer/', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  name: string;
  devDependencies: Record<string, string>;
};

/** This package's name (`torii-gateway`). */
export const packageName = manifest.name;

/** `name@version` as this repository pins it, so the consumer installs what the repository tests with. */
function pinned(name: string): string {
  const version = manifest.devDependencies[name];
  if (version === undefined) throw new Error(`${name} is not a devDependency of the repository`);
  return `${name}@${version}`;
}

/** Runs npm quietly, without audits, funding notices or update checks. */
export function npm(args: string[], cwd: string): string {
  return execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
    maxBuffer: 16 * 1024 * 1024,
  });
}

/** Packs the repository (its built dist/) into `directory` and returns the tarball's path. */
export function packRepository(directory: string): string {
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', directory], root.pathname)) as [
    { filename: string; name: string; files: { path: string }[] },
  ];
  if (packed[0].name !== packageName) throw new Error(`npm pack made ${packed[0].name}, not ${packageName}`);
  return join(directory, packed[0].filename);
}

/** The paths inside a tarball made by {@link packRepository}. */
export function tarballPaths(tarball: string): string[] {
  return execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line !== '');
}

/** A fresh directory with a private ESM package.json, outside the repository. */
export function freshConsumerDirectory(prefix: string): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(directory, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  return directory;
}

/** Bytes of every file under `directory` (symbolic links not followed), as `du --apparent-size` counts them. */
export function directoryBytes(directory: string): number {
  let total = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) total += directoryBytes(path);
    else if (entry.isFile()) total += lstatSync(path).size;
  }
  return total;
}

/**
 * Installs the tarball with the frameworks of the recipes (and what a strict type-check of every entry needs) into
 * a fresh directory, and copies the recipes' apps there.
 */
export function installConsumer(tarball: string): string {
  const directory = freshConsumerDirectory('torii-consumer-');
  const packages = [
    'hono',
    '@hono/node-server',
    'express',
    'fastify',
    'next',
    'react',
    'react-dom',
    'openai',
    'typescript',
    'drizzle-orm',
    '@upstash/redis',
    'ioredis',
    'prom-client',
    'undici',
  ].map(pinned);
  npm(['install', '--prefer-offline', tarball, ...packages, '@types/node@24'], directory);
  cpSync(recipes, directory, { recursive: true });
  cpSync(new URL('gateway-config.mjs', recipes), join(directory, 'next-app', 'gateway-config.mjs'));
  return directory;
}

/**
 * Type-checks `file` of `directory` as a strict consumer (`skipLibCheck: false`) with `moduleResolution`, and returns
 * the compiler's error lines (none when it passes).
 */
export function typeCheckConsumer(directory: string, file: string, moduleResolution: 'node16' | 'bundler'): string[] {
  const name = `tsconfig.${file}.${moduleResolution}.json`;
  writeFileSync(
    join(directory, name),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        target: 'es2023',
        lib: ['es2023', 'dom'],
        types: ['node'],
        module: moduleResolution === 'node16' ? 'node16' : 'esnext',
        moduleResolution,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
      },
      files: [file],
    }),
  );
  const typescript = join(directory, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    execFileSync(process.execPath, [typescript, '-p', name], { cwd: directory, encoding: 'utf8' });
    return [];
  } catch (error) {
    const output = String((error as { stdout?: string }).stdout ?? error);
    return output.split('\n').filter((line) => /error TS\d+/.test(line));
  }
}

/** A process started by {@link startApp}: its output so far, and how to stop it. */
export interface RunningApp {
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `command` in `options.cwd` and resolves once it prints `readyLine` (the apps print `listening`), or rejects
 * with its output when it exits first or `timeoutMs` passes.
 */
export async function startApp(
  command: string[],
  options: { cwd: string; env: Record<string, string>; readyLine: string; timeoutMs: number },
): Promise<RunningApp> {
  // `${PORT}` in an argument stands for the PORT given in env (for commands that take the port as an option).
  const args = command.slice(1).map((argument) => argument.replaceAll('${PORT}', options.env.PORT ?? ''));
  const child: ChildProcess = spawn(command[0] as string, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let printed = '';
  const running: RunningApp = {
    output: () => printed,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-(child.pid as number), 'SIGTERM');
      const kill = setTimeout(() => process.kill(-(child.pid as number), 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(kill);
    },
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      void running.stop();
      reject(
        new Error(`${command.join(' ')} did not print ${options.readyLine} in ${options.timeoutMs} ms:\n${printed}`),
      );
    }, options.timeoutMs);
    const read = (chunk: Buffer) => {
      printed += chunk.toString();
      if (!printed.includes(options.readyLine)) return;
      clearTimeout(timer);
      resolve();
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command.join(' ')} exited with ${code} before it was ready:\n${printed}`));
    });
  });
  return running;
}
