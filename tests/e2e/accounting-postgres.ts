import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../services/free-port.ts';
import { answersQuery, findPostgresBinaries } from '../services/postgres-server.ts';
import { startServiceProcess, waitUntilReady, type ServiceProcess } from '../services/service-process.ts';

/**
 * A PostgreSQL server of the test's own that can be stopped and started again on the same data directory and port,
 * to take the database away from a running gateway. `tests/services/postgres-server.ts` starts the shared server,
 * whose `stop()` also deletes its data; this one keeps the data until `destroy()`.
 */
export interface RestartablePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`; the same across restarts. */
  url: string;
  /** Fast shutdown (clients are disconnected); the data stays. */
  stop(): Promise<void>;
  /** Starts the server again on the same directory and port, and waits until it answers. */
  start(): Promise<void>;
  /** Stops the server and deletes its directory. */
  destroy(): Promise<void>;
}

/** As root, the `postgres` user (the server refuses to run as root). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Creates a cluster in a temporary directory and starts it on a free port (trust auth, no fsync). */
export async function startRestartablePostgres(): Promise<RestartablePostgres> {
  const binaries = findPostgresBinaries();
  const user = serverUser();
  const directory = mkdtempSync(join(tmpdir(), 'torii-e2e-restartable-postgres-'));
  if (user) chownSync(directory, user.uid, user.gid);
  const dataDirectory = join(directory, 'data');
  const asUser = user ?? {};
  const environment = { ...process.env, LC_ALL: 'C' };
  execFileSync(
    join(binaries, 'initdb'),
    ['-D', dataDirectory, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync'],
    { ...asUser, stdio: ['ignore', 'pipe', 'pipe'], env: environment },
  );
  const port = await findFreePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let server: ServiceProcess | undefined;

  const start = async (): Promise<void> => {
    const started = await startServiceProcess(
      join(binaries, 'postgres'),
      [
        ...['-D', dataDirectory, '-p', String(port), '-k', directory],
        ...['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=100'],
        ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
      ],
      { ...asUser, env: environment },
    );
    server = started;
    await waitUntilReady('postgres', started, () => answersQuery(url));
  };
  const stop = async (): Promise<void> => {
    // SIGINT is PostgreSQL's fast shutdown: open connections are cut, as in a crash of the database host.
    await server?.stop('SIGINT', 10_000);
    server = undefined;
  };
  try {
    await start();
  } catch (error) {
    await stop();
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
  return {
    url,
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
