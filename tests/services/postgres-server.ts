import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { findFreePort } from './free-port.ts';
import { startServiceProcess, waitUntilReady, type ServiceProcess } from './service-process.ts';

/** A throwaway PostgreSQL server for one test run. */
export interface TestPostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust auth, no password). */
  url: string;
  stop(): Promise<void>;
}

const installHint =
  'Install the server with `apt-get install postgresql` (Debian/Ubuntu; `bash scripts/services.sh` does it as root), ' +
  'point TORII_POSTGRES_BIN at a directory holding `initdb` and `postgres`, or set TORII_TEST_DATABASE_URL to a ' +
  'running server (its user must be allowed to CREATE DATABASE).';

/** The directory holding `initdb` and `postgres`: TORII_POSTGRES_BIN, else the newest /usr/lib/postgresql/<n>/bin. */
/** True once the server at `url` answers `select 1` (the readiness probe of a freshly started PostgreSQL). */
export async function answersQuery(url: string): Promise<boolean> {
  const client = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await client`select 1`;
    return true;
  } finally {
    await client.end({ timeout: 1 });
  }
}

export function findPostgresBinaries(): string {
  const candidates: string[] = [];
  if (process.env.TORII_POSTGRES_BIN) candidates.push(process.env.TORII_POSTGRES_BIN);
  const debianRoot = '/usr/lib/postgresql';
  if (existsSync(debianRoot)) {
    const versions = readdirSync(debianRoot)
      .filter((name) => /^\d+$/.test(name))
      .sort((left, right) => Number(right) - Number(left));
    candidates.push(...versions.map((version) => join(debianRoot, version, 'bin')));
  }
  const found = candidates.find(
    (directory) => existsSync(join(directory, 'initdb')) && existsSync(join(directory, 'postgres')),
  );
  if (!found) {
    throw new Error(
      `Tests need a PostgreSQL server, but no \`initdb\` and \`postgres\` binaries were found ` +
        `(looked in ${candidates.length ? candidates.join(', ') : `TORII_POSTGRES_BIN and ${debianRoot}/<version>/bin`}). ${installHint}`,
    );
  }
  return found;
}

/** The uid and gid to run PostgreSQL as: itself unless root (postgres refuses root), else the `postgres` user. */
function serverIdentity(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const user of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
      return { uid, gid };
    } catch {
      // no such user: try the next one
    }
  }
  throw new Error('Running as root and there is neither a `postgres` nor a `nobody` user to run PostgreSQL as.');
}

/** Options of {@link startTestPostgres}. */
export interface TestPostgresOptions {
  /** Further server settings, passed as `-c name=value` (e.g. `shared_preload_libraries` for the bench). */
  settings?: Readonly<Record<string, string>>;
}

/**
 * Creates a cluster in a temporary directory (`initdb`, trust auth, no fsync) and starts `postgres` on a free port of
 * 127.0.0.1 as a child process; as root the server runs as the `postgres` user. Durability is off: it is a test server.
 */
export async function startTestPostgres(options: TestPostgresOptions = {}): Promise<TestPostgresServer> {
  const binaries = findPostgresBinaries();
  const identity = serverIdentity();
  const directory = mkdtempSync(join(tmpdir(), 'torii-test-postgres-'));
  const dataDirectory = join(directory, 'data');
  if (identity) chownSync(directory, identity.uid, identity.gid);
  const asServerUser = identity ? { uid: identity.uid, gid: identity.gid } : {};
  try {
    execFileSync(
      join(binaries, 'initdb'),
      [
        '-D',
        dataDirectory,
        '-U',
        'postgres',
        '-A',
        'trust',
        '-E',
        'UTF8',
        '--no-locale',
        '--no-sync',
        '--no-instructions',
      ],
      { ...asServerUser, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
    );
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`initdb failed: ${stderr || String(error)}`, { cause: error });
  }

  const port = await findFreePort();
  let server: ServiceProcess;
  try {
    server = await startServiceProcess(
      join(binaries, 'postgres'),
      [
        ...['-D', dataDirectory, '-p', String(port), '-k', directory],
        ...['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300'],
        ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
        ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
      ],
      { ...asServerUser, env: { ...process.env, LC_ALL: 'C' } },
    );
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }

  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const stop = async (): Promise<void> => {
    // SIGINT is PostgreSQL's "fast" shutdown: it disconnects clients instead of waiting for them.
    await server.stop('SIGINT');
    rmSync(directory, { recursive: true, force: true });
  };
  try {
    await waitUntilReady('postgres', server, () => answersQuery(url));
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, stop };
}
