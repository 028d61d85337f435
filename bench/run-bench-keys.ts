import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openKeyCounters, statementStatisticsSettings } from './bench-keys-counters.ts';
import { loadKeyLimits, seedVirtualKeys } from './bench-keys-seed.ts';
import {
  formatVariantSummary,
  formatVariantTable,
  keySliceRow,
  keysResultsDocument,
  summarizeVariant,
  type KeySliceRow,
  type KeysPhase,
  type KeysVariant,
} from './bench-keys-slices.ts';
import {
  compileBenchServer,
  freePort,
  httpExchange,
  installCleanup,
  startPinnedServer,
  stopProcess,
  type ManagedProcess,
} from './bench-process.ts';
import { benchModel, scenarioRequestBody } from './bench-scenarios.ts';
import { startBenchServices } from './bench-services.ts';
import { assertWrkInstalled, runWrk } from './bench-wrk.ts';

/**
 * `pnpm bench:keys`: 1,000,000 virtual keys in Postgres, requests spread over 10,000 of them, cold cache -> warm.
 *
 * Seeds the bench's PostgreSQL with the keys, then measures two variants, each a fresh torii process (empty
 * in-process key tier and rate limiter) warmed up with the master key (JIT, no key lookups), then loaded by wrk with a
 * random load key per request in back-to-back 1-second runs, each one a slice of the report:
 *
 * 1. `cold-redis`: Redis flushed first, so every key's first request goes to Postgres;
 * 2. `warm-redis`: the same keys after a restart with Redis kept, so the misses stop at the shared tier.
 *
 * Each variant runs a cold phase, a warm phase, and an expiry phase past the in-process tier's 30-second trust. Around
 * every slice the bench reads Redis `INFO commandstats` and `pg_stat_statements`. See bench/README.md.
 */

const benchDirectory = dirname(fileURLToPath(import.meta.url));
const repositoryRoot = dirname(benchDirectory);
const targetCpu = 0;
const loadCpu = 1;
const cpus = { target: targetCpu, load: loadCpu };

/** Sizes and durations, from the environment. */
interface KeysBenchSettings {
  totalKeys: number;
  loadKeys: number;
  connections: number;
  /** A monthly budget for every load key; undefined: none (the default, see the README). */
  budgetUsd: number | undefined;
  /** Whether load keys have RPM/TPM limits (default yes). */
  limits: boolean;
  /** Seconds of master-key load before each variant (JIT and heap settle; no key lookups). */
  warmUpSeconds: number;
  coldSeconds: number;
  warmSeconds: number;
  expirySeconds: number;
}

function readSettings(): KeysBenchSettings {
  const integer = (name: string, fallback: number): number => {
    const value = Number(process.env[name] ?? fallback);
    if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer`);
    return value;
  };
  return {
    totalKeys: integer('BENCH_KEYS_TOTAL', 1_000_000),
    loadKeys: integer('BENCH_KEYS_LOAD', 10_000),
    connections: integer('BENCH_KEYS_CONNECTIONS', 32),
    budgetUsd: process.env.BENCH_KEYS_BUDGET_USD ? integer('BENCH_KEYS_BUDGET_USD', 0) : undefined,
    limits: integer('BENCH_KEYS_LIMITS', 1) !== 0,
    warmUpSeconds: integer('BENCH_KEYS_WARM_UP_SECONDS', 4),
    // The warm phase ends before the in-process tier's entries (trusted 30 s) start expiring; the expiry phase
    // starts there.
    coldSeconds: integer('BENCH_KEYS_COLD_SECONDS', 20),
    warmSeconds: integer('BENCH_KEYS_WARM_SECONDS', 8),
    expirySeconds: integer('BENCH_KEYS_EXPIRY_SECONDS', 10),
  };
}

const startedAt = performance.now();
const elapsedSeconds = (): number => (performance.now() - startedAt) / 1_000;
const log = (message: string): void => {
  process.stdout.write(`[${elapsedSeconds().toFixed(1).padStart(5)}s] ${message}\n`);
};

/** Spawns a pinned server and waits for its first chat 200 (with `authorization`); kills it if that fails. */
async function startServer(options: {
  name: string;
  cpu: number;
  command: string[];
  environment: Record<string, string>;
  workingDirectory: string;
  temporaryDirectory: string;
  port: number;
  authorization: string;
}): Promise<ManagedProcess> {
  const { managed, coldStart } = await startPinnedServer({ ...options, chatBody: scenarioRequestBody('chat') });
  log(
    `${options.name} up (pid ${managed.pid}, CPU ${options.cpu}), first chat 200 after ${coldStart.firstChatSeconds.toFixed(3)} s`,
  );
  return managed;
}

/** Sends one chat request with each secret (16 at a time); throws unless every one answers 200. */
async function touchKeys(port: number, secrets: readonly string[]): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < secrets.length) {
      const secret = secrets[next++]!;
      const answer = await httpExchange({
        port,
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${secret}` },
        body: scenarioRequestBody('chat'),
      });
      if (answer.status !== 200) throw new Error(`a load key answered ${answer.status}: ${answer.body.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

function phaseAt(seconds: number, settings: KeysBenchSettings): KeysPhase | undefined {
  if (seconds < settings.coldSeconds) return 'cold';
  if (seconds < settings.coldSeconds + settings.warmSeconds) return 'warm';
  if (seconds < settings.coldSeconds + settings.warmSeconds + settings.expirySeconds) return 'expiry';
  return undefined;
}

async function main(): Promise<number> {
  assertWrkInstalled();
  const settings = readSettings();
  const temporaryDirectory = mkdtempSync(join(tmpdir(), 'torii-bench-keys-'));
  installCleanup(() => rmSync(temporaryDirectory, { recursive: true, force: true }));
  const masterKey = `sk-torii-bench-${crypto.randomUUID()}`;
  const masterAuthorization = `Bearer ${masterKey}`;
  const bodyFile = join(temporaryDirectory, 'chat.json');
  writeFileSync(bodyFile, scenarioRequestBody('chat'));
  const toriiOverride = process.env.TORII_BENCH_COMMAND?.trim() || undefined;
  const distServer = join(repositoryRoot, 'dist', 'server.js');
  if (toriiOverride === undefined && !existsSync(distServer)) {
    throw new Error(`${distServer} does not exist: run \`pnpm build\` (or set TORII_BENCH_COMMAND)`);
  }
  const cpuModel = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
  log(
    `torii bench:keys: node ${process.version}, ${cpuModel}; ${settings.totalKeys} keys, load over ` +
      `${settings.loadKeys}, ${settings.connections} connections; torii on CPU ${targetCpu}, wrk, mock, ` +
      `PostgreSQL and Redis on CPU ${loadCpu}`,
  );

  const servicesStarting = startBenchServices(loadCpu, { postgresSettings: statementStatisticsSettings() });
  servicesStarting.catch(() => {});
  const mockScript = await compileBenchServer(join(benchDirectory, 'bench-mock-upstream.ts'), temporaryDirectory);
  const services = await servicesStarting;
  log(
    `PostgreSQL (pid ${services.postgresPid}) and Redis (pid ${services.redisPid}) up, pinned to CPU ${loadCpu}, ${services.scheduling}`,
  );
  const [mockPort, toriiPort] = [await freePort(), await freePort()];
  const mockURL = `http://127.0.0.1:${mockPort}`;
  await startServer({
    name: 'mock',
    cpu: loadCpu,
    command: [process.execPath, mockScript],
    environment: { PORT: String(mockPort) },
    workingDirectory: repositoryRoot,
    temporaryDirectory,
    port: mockPort,
    authorization: masterAuthorization,
  });
  const configPath = join(temporaryDirectory, 'torii-config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      modelGroups: {
        [benchModel]: {
          deployments: [{ provider: 'openai', model: benchModel, baseURL: `${mockURL}/v1`, apiKey: 'sk-bench' }],
        },
      },
    }),
  );
  let toriiRun = 0;
  const startTorii = (name: string): Promise<ManagedProcess> =>
    startServer({
      name: `${name}-${++toriiRun}`,
      cpu: targetCpu,
      command: toriiOverride === undefined ? [process.execPath, distServer] : ['sh', '-c', `exec ${toriiOverride}`],
      environment: {
        PORT: String(toriiPort),
        TORII_WORKERS: '1',
        TORII_MASTER_KEY: masterKey,
        TORII_CONFIG: configPath,
        DATABASE_URL: services.databaseUrl,
        REDIS_URL: services.redisUrl,
        TORII_DATA_DIR: temporaryDirectory,
      },
      workingDirectory: toriiOverride === undefined ? temporaryDirectory : repositoryRoot,
      temporaryDirectory,
      port: toriiPort,
      authorization: masterAuthorization,
    });
  const stopTorii = async (torii: ManagedProcess): Promise<void> => {
    const stopped = await stopProcess(torii, { signal: 'SIGTERM', timeoutMs: 10_000 });
    log(
      `${torii.name}: SIGTERM -> ${stopped.graceful ? 'exited' : 'killed'} after ${stopped.milliseconds.toFixed(0)} ms`,
    );
  };

  // The first torii process migrates the empty database; the keys go in after it stopped.
  await stopTorii(await startTorii('torii-migrate'));
  const seeded = await seedVirtualKeys({
    databaseUrl: services.databaseUrl,
    total: settings.totalKeys,
    loadKeys: settings.loadKeys,
    ...(settings.budgetUsd === undefined ? {} : { loadKeyBudgetUsd: settings.budgetUsd }),
    loadKeyLimits: settings.limits,
    onProgress: (inserted) => {
      if (inserted % 200_000 === 0 || inserted === settings.totalKeys) log(`seeded ${inserted} keys`);
    },
  });
  log(
    `seeding: ${seeded.total} keys inserted in ${seeded.insertSeconds.toFixed(1)} s, vacuum analyze ` +
      `${seeded.vacuumSeconds.toFixed(1)} s; virtual_keys with its indexes is ${(seeded.tableBytes / 2 ** 20).toFixed(0)} MB`,
  );
  const keysFile = join(temporaryDirectory, 'load-keys.txt');
  writeFileSync(keysFile, seeded.loadSecrets.join('\n') + '\n');

  const counters = await openKeyCounters({ databaseUrl: services.databaseUrl, redisUrl: services.redisUrl });
  log(`Postgres key lookups counted with ${counters.postgresSource}`);
  const seedBase = Math.floor(Math.random() * 1_000_000_000);
  let wrkRun = 0;

  const runVariant = async (
    torii: ManagedProcess,
    variant: Omit<KeysVariant, 'rows' | 'summary' | 'heldInRedisAtStart'>,
  ): Promise<KeysVariant> => {
    // JIT warm-up with the master key: no key lookup, no limit lease, so the caches stay as they are.
    const { result: warmUp } = await runWrk({
      url: `http://127.0.0.1:${toriiPort}/v1/chat/completions`,
      connections: settings.connections,
      durationSeconds: settings.warmUpSeconds,
      bodyFile,
      authorization: masterAuthorization,
      cpu: loadCpu,
      logPath: join(temporaryDirectory, `wrk-${++wrkRun}.log`),
    });
    log(`${variant.name}: master-key warm-up ${warmUp.requestsPerSecond.toFixed(0)} rps, ${warmUp.errors} errors`);
    const heldInRedisAtStart =
      seeded.loadHashes.length - (await counters.missingFromSharedCache(seeded.loadHashes)).length;
    log(`${variant.name}: Redis holds ${heldInRedisAtStart} of the ${seeded.loadHashes.length} load keys`);
    const rows: KeySliceRow[] = [];
    let before = await counters.read(torii.pid, cpus);
    const origin = before.at;
    let requestsBefore = 0;
    for (;;) {
      const phase = phaseAt((before.at - origin) / 1_000, settings);
      if (phase === undefined || torii.hasExited()) break;
      const { result } = await runWrk({
        url: `http://127.0.0.1:${toriiPort}/v1/chat/completions`,
        connections: settings.connections,
        durationSeconds: 1,
        bodyFile,
        keysFile,
        seed: seedBase + wrkRun,
        cpu: loadCpu,
        logPath: join(temporaryDirectory, `wrk-${++wrkRun}.log`),
      });
      const after = await counters.read(torii.pid, cpus);
      const row = keySliceRow({ phase, origin, before, after, load: result, keys: settings.loadKeys, requestsBefore });
      rows.push(row);
      requestsBefore += result.requests;
      before = after;
      log(
        `${variant.name} ${phase} ${row.start_s.toFixed(1)}-${row.end_s.toFixed(1)} s: ${row.rps.toFixed(0)} rps, ` +
          `p50 ${row.p50_ms.toFixed(3)} ms, p99 ${row.p99_ms.toFixed(3)} ms, ${row.errors} errors; Postgres ` +
          `${row.postgres_key_lookups}, Redis key reads ${row.redis_key_reads}, limit scripts ${row.redis_limit_scripts}`,
      );
    }
    return { ...variant, heldInRedisAtStart, rows, summary: summarizeVariant(rows, variant.tier) };
  };

  const variants: KeysVariant[] = [];
  // 1. Nothing cached anywhere: Redis flushed, a fresh process.
  await counters.flushRedis();
  const coldTorii = await startTorii('torii-cold-redis');
  // A seeded key that is not a load key must authenticate: the rows are what the admin API would have stored.
  const check = await httpExchange({
    port: toriiPort,
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { authorization: `Bearer ${seeded.checkSecret}` },
    body: scenarioRequestBody('chat'),
  });
  if (check.status !== 200) throw new Error(`a seeded key answered ${check.status}: ${check.body.slice(0, 300)}`);
  variants.push(
    await runVariant(coldTorii, {
      name: 'cold-redis',
      description: 'fresh torii process (empty in-process tier), Redis flushed: first requests of a key reach Postgres',
      tier: 'postgres',
    }),
  );
  // Variant 2 needs every load key in Redis: a key the random choice never picked (or a slow run did not reach) is
  // requested once now, so its record goes to Redis like the others'.
  const missing = await counters.missingFromSharedCache(seeded.loadHashes);
  if (missing.length > 0) {
    log(`${missing.length} load keys were not requested in variant 1: requesting each once`);
    await touchKeys(
      toriiPort,
      missing.map((index) => seeded.loadSecrets[index]!),
    );
  }
  await stopTorii(coldTorii);
  // 2. A restart with Redis kept: the in-process tier is empty, the shared one holds every load key.
  const warmRedisTorii = await startTorii('torii-warm-redis');
  variants.push(
    await runVariant(warmRedisTorii, {
      name: 'warm-redis',
      description: 'fresh torii process (empty in-process tier), Redis kept from variant 1: misses stop at Redis',
      tier: 'redis',
    }),
  );
  await stopTorii(warmRedisTorii);
  await counters.close();
  await services.stop();

  const resultsPath = join(benchDirectory, 'results', 'keys-latest.json');
  mkdirSync(dirname(resultsPath), { recursive: true });
  const documentSettings = {
    total_keys: settings.totalKeys,
    load_keys: settings.loadKeys,
    load_key_rpm_limit: settings.limits ? loadKeyLimits.rpmLimit : null,
    load_key_tpm_limit: settings.limits ? loadKeyLimits.tpmLimit : null,
    load_key_budget_usd_per_month: settings.budgetUsd ?? null,
    connections: settings.connections,
    slice_seconds: 1,
    warm_up_seconds: settings.warmUpSeconds,
    phases_s: { cold: settings.coldSeconds, warm: settings.warmSeconds, expiry: settings.expirySeconds },
    seeding_insert_s: Number(seeded.insertSeconds.toFixed(1)),
    seeding_vacuum_s: Number(seeded.vacuumSeconds.toFixed(1)),
    table_mb: Number((seeded.tableBytes / 2 ** 20).toFixed(0)),
    postgres_lookups_from: counters.postgresSource,
  };
  writeFileSync(resultsPath, JSON.stringify(keysResultsDocument(documentSettings, variants), null, 2) + '\n');

  const output = [
    '',
    `torii bench:keys: ${settings.totalKeys} virtual keys in Postgres (${(seeded.tableBytes / 2 ** 20).toFixed(0)} MB ` +
      `with indexes), wrk with ${settings.connections} connections picking one of ${settings.loadKeys} at random per ` +
      'request, 1-second slices;',
    (settings.limits
      ? `load keys: RPM ${loadKeyLimits.rpmLimit}, TPM ${loadKeyLimits.tpmLimit}, `
      : 'load keys: no RPM/TPM limits, ') +
      (settings.budgetUsd === undefined
        ? 'no budget.'
        : `a budget of ${settings.budgetUsd} USD a month (its spend counters are Redis GETs and SETs too).`),
    'pg_lookups = key selects that reached Postgres (pg_blocks_read of them from outside its buffer cache),',
    'redis_key_gets = GETs of the shared key cache (Redis GETs minus the one each limit script runs inside Redis),',
    'expected_new_keys = keys requested for the first time in the slice if keys are picked uniformly,',
    'limit_scripts = rate-limit lease/release scripts, redis_cmds = every command Redis counted (scripts and what',
    'they run inside Redis included), torii% = its CPU, cpu0% = its core, cpu1% = the load core (wrk, mock,',
    'PostgreSQL, Redis), other% = processes outside the bench (above ~10: a noisy slice); * = the slice spans the',
    'start of a rate-limit window (a wall-clock minute), when every key leases anew.',
    ...variants.flatMap((variant, index) => [
      '',
      `${index + 1}. ${variant.name}: ${variant.description}; Redis held ${variant.heldInRedisAtStart} of the ` +
        `${settings.loadKeys} load keys at the start`,
      formatVariantTable(variant),
      ...formatVariantSummary(variant),
    ]),
    '',
    `Wrote ${resultsPath}. Total time ${elapsedSeconds().toFixed(1)} s.`,
    '',
  ];
  process.stdout.write(output.join('\n'));
  return 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`bench:keys failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
} finally {
  process.exit();
}
