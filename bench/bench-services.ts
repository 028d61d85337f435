import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { dirname } from 'node:path';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { startTestPostgres } from '../tests/services/postgres-server.ts';
import { startTestRedis } from '../tests/services/redis-server.ts';
import { installCleanup, processTree } from './bench-process.ts';
import { parseRedisCommandStats, type NetworkCounters } from './bench-network.ts';

/**
 * The gateway's real services during the bench: a throwaway PostgreSQL and Redis (the test servers of
 * `tests/services/`), pinned to the load CPU like the mock at the lowest priority (see `lowerPriority` and `idleCpuGroup`), plus the observer connections that read their per-command
 * and per-database counters around the measurements. Both servers are stopped at the end, and killed (their temp
 * directory removed) if the bench exits, fails or is interrupted before that.
 */

/** The database torii uses; the observer stays on `postgres`, so its own queries are not counted against torii's. */
const benchDatabase = 'torii_bench';

/** The started services and their observers. */
export interface BenchServices {
  /** torii's `DATABASE_URL`: the `torii_bench` database. */
  databaseUrl: string;
  /** torii's `REDIS_URL`. */
  redisUrl: string;
  /** The postmaster's and redis-server's pids, for the log. */
  postgresPid: number;
  redisPid: number;
  /** For the log: how the services are kept off the load CPU's busy moments (the idle CPU group, or why not). */
  scheduling: string;
  /** Reads Redis `INFO commandstats` and the bench database's row of `pg_stat_database`, now. */
  readCounters(): Promise<NetworkCounters>;
  /** Ledger rows (`usage_events`) written for one key id. */
  countLedgerRows(keyId: string): Promise<number>;
  /** Closes the observers and stops both servers (PostgreSQL removes its temp directory). */
  stop(): Promise<void>;
}

/** Direct children of this process whose command name is `name` (the services are spawned from here, not detached). */
function childrenNamed(name: string): number[] {
  const found: number[] = [];
  for (const task of readdirSync(`/proc/${process.pid}/task`)) {
    let children: string;
    try {
      children = readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').trim();
    } catch {
      continue;
    }
    if (children === '') continue;
    for (const pid of children.split(/\s+/).map(Number)) {
      try {
        if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name) found.push(pid);
      } catch {
        // Gone.
      }
    }
  }
  return found;
}

/** Pins every thread of every process in `pids` to `cpu` (`taskset -a -p -c`); processes forked later inherit it. */
function pinProcesses(pids: readonly number[], cpu: number): void {
  for (const pid of pids) {
    try {
      execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
    } catch {
      // The process ended meanwhile (a short-lived postgres child).
    }
  }
}

/**
 * The lowest CPU priority for every thread of these processes: nice 19 and Linux's `SCHED_IDLE` policy (`chrt --idle`,
 * util-linux like `taskset`; without it, nice 19 alone). PostgreSQL's backends, forked later, inherit both. The
 * services stand in for databases on other hosts, but here they share the load CPU with wrk and the mock: at their
 * normal priority a usage batch's insert (a few ms of PostgreSQL's CPU twice a second) held the load generator and the
 * mock off the core, and that delay was counted in the production shape's p99 at the fixed rate. A `SCHED_IDLE` task
 * is preempted at once by a woken normal task, but only by one on the same run queue: with the kernel's session
 * autogroups (`kernel.sched_autogroup_enabled`, on by default) each `setsid` process tree is its own task group, and
 * wrk, the mock (both spawned detached) and the services compete as groups of equal weight, where the services' group
 * still runs out its time slice (see {@link idleCpuGroup}, which fixes that). The gateway waits for them on its request
 * path only when a key's in-process entry expires (once per key every 30 s) or a limit's lease runs out; usage and
 * spend go in the background. So their priority changes what the load side sees, not what the gateway does.
 */
function lowerPriority(pids: readonly number[]): void {
  for (const pid of pids) {
    let threads: string[];
    try {
      threads = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // The process ended meanwhile.
    }
    for (const thread of threads) {
      try {
        setPriority(Number(thread), 19);
        execFileSync('chrt', ['--idle', '--pid', '0', thread], { stdio: 'ignore' });
      } catch {
        // The thread ended meanwhile, or chrt is missing (nice 19 stays).
      }
    }
  }
}

/** Where {@link idleCpuGroup} put the services, and how to remove the group once they have exited. */
export interface IdleCpuGroup {
  /** For the log: the group's path, or why there is none. */
  description: string;
  /** Removes the (by then empty) group; waits up to `waitMs` for killed processes to leave it. Never throws. */
  remove(waitMs: number): void;
}

/**
 * Moves these processes (every thread; children forked later follow) into a new CPU cgroup marked idle (`cpu.idle`:
 * the whole group is scheduled like a `SCHED_IDLE` task against its siblings). Needed because `SCHED_IDLE` alone
 * works only inside a run queue: under session autogroups the services' group competed with the mock's and wrk's
 * groups as an equal, and a woken mock waited for PostgreSQL's running slice. Traced with `perf sched` in the
 * production shape at max throughput (2 s): CPU 0, the gateway's, was idle 3.3% of the time in 52 gaps, 33 ms of it in
 * gaps of 2-3.4 ms, each while PostgreSQL ran on CPU 1 with the mock woken and waiting (or CPU 1 idle right after);
 * with the idle group, 0.5% in gaps under 2 ms, as in the lean shape (0.4%). Best effort: cgroup v1's `cpu`
 * hierarchy or v2 with the `cpu` controller, and root; otherwise the bench runs without it and says so.
 *
 * @example
 * const group = idleCpuGroup([postgresPid, redisPid]);
 * log(group.description); // "idle CPU group /sys/fs/cgroup/cpu/torii-bench-services-1234"
 * // ... stop the services ...
 * group.remove(2000);
 */
export function idleCpuGroup(pids: readonly number[]): IdleCpuGroup {
  const name = `torii-bench-services-${process.pid}`;
  const version1 = '/sys/fs/cgroup/cpu';
  const root = existsSync(`${version1}/cpu.idle`) || existsSync(`${version1}/tasks`) ? version1 : '/sys/fs/cgroup';
  const directory = `${root}/${name}`;
  const none = (reason: string): IdleCpuGroup => ({ description: `no idle CPU group (${reason})`, remove() {} });
  try {
    if (root !== version1 && !readFileSync(`${root}/cgroup.subtree_control`, 'utf8').split(/\s+/).includes('cpu'))
      return none('the cgroup v2 root does not delegate the cpu controller');
    mkdirSync(directory);
  } catch (error) {
    return none((error as Error).message);
  }
  const remove = (waitMs: number) => {
    const deadline = Date.now() + waitMs;
    for (;;) {
      try {
        rmdirSync(directory);
        return;
      } catch {
        // Still holds a process that is exiting, or already gone.
        if (!existsSync(directory) || Date.now() >= deadline) return;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      }
    }
  };
  try {
    writeFileSync(`${directory}/cpu.idle`, '1');
    for (const pid of pids) {
      try {
        writeFileSync(`${directory}/cgroup.procs`, String(pid));
      } catch (error) {
        if (existsSync(`/proc/${pid}`)) throw error; // Ended meanwhile is fine; refused is not.
      }
    }
  } catch (error) {
    for (const pid of pids) {
      try {
        writeFileSync(`${root}/cgroup.procs`, String(pid));
      } catch {
        // Gone, or never moved.
      }
    }
    remove(0);
    return none((error as Error).message);
  }
  return { description: `idle CPU group ${directory}`, remove };
}

/** The `-D` argument of the postmaster's command line: its data directory, whose parent is the server's temp dir. */
function postgresTemporaryDirectory(pid: number): string | undefined {
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  const data = argv[argv.indexOf('-D') + 1];
  return argv.includes('-D') && data !== undefined ? dirname(data) : undefined;
}

/**
 * Starts PostgreSQL and Redis (in parallel), pins both (the postmaster with every child it has, so the backends it
 * forks later inherit the CPU) to `cpu`, creates the `torii_bench` database, and opens the observer connections.
 * `postgresSettings` are further server settings (`bench:keys` loads `pg_stat_statements` with them).
 *
 * @example
 * const services = await startBenchServices(1);
 * const before = await services.readCounters();
 */
export async function startBenchServices(
  cpu: number,
  options: { postgresSettings?: Readonly<Record<string, string>> } = {},
): Promise<BenchServices> {
  const [postgresStart, redisStart] = await Promise.allSettled([
    startTestPostgres({ settings: options.postgresSettings ?? {} }),
    startTestRedis(),
  ]);
  const started = [postgresStart, redisStart].flatMap((each) => (each.status === 'fulfilled' ? [each.value] : []));
  if (postgresStart.status === 'rejected' || redisStart.status === 'rejected') {
    await Promise.all(started.map((each) => each.stop().catch(() => {})));
    const reasons = [postgresStart, redisStart].flatMap((each) =>
      each.status === 'rejected' ? [(each.reason as Error).message] : [],
    );
    throw new Error(`could not start the bench services: ${reasons.join('; ')}`);
  }
  const postgresServer = postgresStart.value;
  const redisServer = redisStart.value;
  const postgresPid = childrenNamed('postgres')[0];
  const redisPid = childrenNamed('redis-server')[0];
  let stopped = false;
  // The idle CPU group, once made (the cleanup below may run before).
  const cpuGroups: IdleCpuGroup[] = [];
  const temporaryDirectory = postgresPid === undefined ? undefined : postgresTemporaryDirectory(postgresPid);
  // Interrupted or failed before stop(): kill both trees synchronously and remove PostgreSQL's directory.
  installCleanup(() => {
    if (stopped) return;
    for (const pid of [postgresPid, redisPid]) {
      if (pid === undefined) continue;
      for (const each of processTree(pid).reverse()) {
        try {
          process.kill(each, 'SIGKILL');
        } catch {
          // Gone.
        }
      }
    }
    if (temporaryDirectory !== undefined) rmSync(temporaryDirectory, { recursive: true, force: true });
    for (const group of cpuGroups) group.remove(1000);
  });
  if (postgresPid === undefined || redisPid === undefined) {
    stopped = true;
    await Promise.all([postgresServer.stop(), redisServer.stop()]);
    throw new Error('started PostgreSQL and Redis but could not find their pids to pin them');
  }
  pinProcesses(processTree(postgresPid), cpu);
  pinProcesses([redisPid], cpu);
  lowerPriority([...processTree(postgresPid), redisPid]);
  const cpuGroup = idleCpuGroup([...processTree(postgresPid), redisPid]);
  cpuGroups.push(cpuGroup);

  const administration = postgres(postgresServer.url, { max: 1, onnotice: () => {} });
  const redis = new Redis(redisServer.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await administration.unsafe(`create database ${benchDatabase}`);
    await redis.connect();
  } catch (error) {
    stopped = true;
    redis.disconnect();
    await administration.end({ timeout: 1 });
    await Promise.all([postgresServer.stop(), redisServer.stop()]);
    cpuGroup.remove(2000);
    throw error;
  }
  const databaseUrl = postgresServer.url.replace(/\/postgres$/, `/${benchDatabase}`);
  // The ledger lives in torii's database; a second observer connection reads it (once, at the end).
  const ledger = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  return {
    databaseUrl,
    redisUrl: redisServer.url,
    postgresPid,
    redisPid,
    scheduling: cpuGroup.description,
    async readCounters() {
      const [info, database] = await Promise.all([
        redis.info('commandstats'),
        administration<{ xact_commit: string; tup_inserted: string }[]>`
          select xact_commit::text, tup_inserted::text from pg_stat_database where datname = ${benchDatabase}`,
      ]);
      return {
        at: performance.now(),
        redisCommands: parseRedisCommandStats(info),
        postgresTransactions: Number(database[0]?.xact_commit ?? 0),
        postgresInsertedRows: Number(database[0]?.tup_inserted ?? 0),
      };
    },
    async countLedgerRows(keyId) {
      const [row] = await ledger<{ count: string }[]>`select count(*)::text as count from usage_events
        where key_id = ${keyId}`;
      return Number(row?.count ?? 0);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      redis.disconnect();
      await Promise.all([administration.end({ timeout: 1 }), ledger.end({ timeout: 1 })]);
      await Promise.all([postgresServer.stop(), redisServer.stop()]);
      cpuGroup.remove(2000);
    },
  };
}
