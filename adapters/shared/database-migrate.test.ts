import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmptyTestDatabase } from '../../tests/services/test-database.ts';
import { migratePostgres } from './database-migrate.ts';
import { findMigrationsFolder } from './database-migrations-folder.ts';

const folder = findMigrationsFolder({});
const journal = JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] };
const childScript = new URL('../../tests/services/migrate-child-process.ts', import.meta.url).pathname;

/** A child process that migrates `url` when told to go. */
function startChild(url: string): { ready: Promise<void>; go(): void; done: Promise<{ ok: boolean; output: string }> } {
  const child = spawn(process.execPath, [childScript, url, folder], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let signalReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (signalReady = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.includes('ready\n')) signalReady();
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const done = new Promise<{ ok: boolean; output: string }>((resolve) => {
    child.once('exit', (code) => {
      signalReady();
      resolve({ ok: code === 0, output });
    });
  });
  return { ready, go: () => child.stdin.end('go\n'), done };
}

/** What a migrated database holds: the applied migrations and the public tables. */
async function schemaOf(url: string): Promise<{ migrations: number; tables: string[] }> {
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [applied] = await client`select count(*)::int as count from drizzle.__drizzle_migrations`;
    const tables = await client`select tablename from pg_tables where schemaname = 'public' order by tablename`;
    return { migrations: applied!.count as number, tables: tables.map((row) => row.tablename as string) };
  } finally {
    await client.end({ timeout: 5 });
  }
}

describe('migratePostgres', () => {
  const drops: Array<() => Promise<void>> = [];
  afterAll(() => Promise.all(drops.map((drop) => drop())));

  it('applies the schema once when 6 processes start on one fresh database at the same moment', async () => {
    const database = await createEmptyTestDatabase();
    drops.push(database.drop);
    const children = Array.from({ length: 6 }, () => startChild(database.url));
    // Release them together once every one has loaded node, drizzle and postgres-js.
    await Promise.all(children.map((child) => child.ready));
    for (const child of children) child.go();
    const results = await Promise.all(children.map((child) => child.done));
    expect(results.filter((result) => !result.ok).map((result) => result.output)).toEqual([]);
    expect(results.map((result) => result.output)).toEqual(Array(6).fill('ready\nmigrated\n'));
    expect(await schemaOf(database.url)).toEqual({
      migrations: journal.entries.length,
      tables: ['stored_responses', 'usage_events', 'virtual_keys'],
    });
  }, 90_000);

  it('does nothing on a database already migrated', async () => {
    const database = await createEmptyTestDatabase();
    drops.push(database.drop);
    await migratePostgres(database.url, folder);
    await migratePostgres(database.url, folder);
    expect((await schemaOf(database.url)).migrations).toBe(journal.entries.length);
  });
});

describe('findMigrationsFolder', () => {
  const repositoryRoot = new URL('../../', import.meta.url).pathname;

  it('finds src/db/migrations from the sources, the server bundle and the library build', () => {
    const expected = join(repositoryRoot, 'src', 'db', 'migrations');
    expect(findMigrationsFolder({})).toBe(expected);
    for (const built of ['dist/server.js', 'dist/lib/node.js']) {
      expect(findMigrationsFolder({}, new URL(built, `file://${repositoryRoot}`).href)).toBe(expected);
    }
  });

  it('honours TORII_MIGRATIONS_DIR, and names what it searched when nothing is found', () => {
    expect(findMigrationsFolder({ TORII_MIGRATIONS_DIR: folder }, 'file:///nowhere/x.js')).toBe(folder);
    expect(() => findMigrationsFolder({ TORII_MIGRATIONS_DIR: '/nowhere' })).toThrow(/TORII_MIGRATIONS_DIR/);
    expect(() => findMigrationsFolder({}, 'file:///nowhere/dist/server.js')).toThrow(/\/nowhere\/dist\/migrations/);
  });
});
