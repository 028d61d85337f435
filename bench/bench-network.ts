/**
 * The network evidence of the bench: how many Redis commands and Postgres transactions and rows the gateway caused
 * while the `production` shape (driven with its virtual key) was measured at the fixed rate, per 1,000 requests.
 * With a warm cache the request path should make no network call for auth, limits or budget: Redis sees a few
 * background calls per second (lease refills, budget pushes and refreshes) and Postgres about one transaction per
 * ledger batch (up to 500 rows) and one row per request.
 * Pure functions, no I/O, so they are unit tested; the counters are read by `bench-services.ts`.
 */

/** One reading of the services' counters. */
export interface NetworkCounters {
  /** `performance.now()` when read. */
  at: number;
  /** Calls per Redis command since the server started (`INFO commandstats`), lower-case names (`evalsha`). */
  redisCommands: Record<string, number>;
  /** `xact_commit` of the bench database in `pg_stat_database`. */
  postgresTransactions: number;
  /** `tup_inserted` of the bench database in `pg_stat_database`. */
  postgresInsertedRows: number;
}

/** What the gateway caused on the network during one or more runs of one measurement. */
export interface NetworkWindow {
  scenario: string;
  connections: number;
  rate?: number;
  /** Requests wrk completed during the window. */
  requests: number;
  /** Seconds between the readings. */
  seconds: number;
  /** Redis calls per command during the window (the observer's own `info` excluded). */
  redisCommands: Record<string, number>;
  postgresTransactions: number;
  postgresInsertedRows: number;
}

/** The exact cross-check of the ledger: rows written for the bench key against the requests made with it. */
export interface LedgerCheck {
  /** `usage_events` rows with the bench key's id, counted after production drained its usage queue and exited. */
  rows: number;
  /** Requests with the key that wrk (and the bench's own check request) saw completed. */
  completedRequests: number;
  /** wrk does not count the requests in flight when it stops: at most its connections, summed over the key's runs. */
  uncountedAtMost: number;
}

/** Commands the bench's observer itself sends to Redis, left out of the counts. */
const observerCommands = new Set(['info']);

/**
 * Parses `INFO commandstats` (`cmdstat_evalsha:calls=12,usec=...`) into calls per command.
 *
 * @example
 * parseRedisCommandStats('cmdstat_get:calls=3,usec=9\r\n'); // { get: 3 }
 */
export function parseRedisCommandStats(info: string): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const line of info.split(/\r?\n/)) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (match !== null) calls[match[1]!.toLowerCase()] = Number(match[2]);
  }
  return calls;
}

/**
 * The difference between two readings, attributed to `requests` requests of one measurement.
 *
 * @example
 * const window = networkWindow(before, after, { scenario: 'chat', connections: 32 }, 30_000);
 */
export function networkWindow(
  before: NetworkCounters,
  after: NetworkCounters,
  measurement: { scenario: string; connections: number; rate?: number },
  requests: number,
): NetworkWindow {
  const redisCommands: Record<string, number> = {};
  for (const [command, calls] of Object.entries(after.redisCommands)) {
    const delta = calls - (before.redisCommands[command] ?? 0);
    if (delta > 0 && !observerCommands.has(command)) redisCommands[command] = delta;
  }
  return {
    scenario: measurement.scenario,
    connections: measurement.connections,
    ...(measurement.rate === undefined ? {} : { rate: measurement.rate }),
    requests,
    seconds: (after.at - before.at) / 1_000,
    redisCommands,
    postgresTransactions: after.postgresTransactions - before.postgresTransactions,
    postgresInsertedRows: after.postgresInsertedRows - before.postgresInsertedRows,
  };
}

function windowKey(window: Pick<NetworkWindow, 'scenario' | 'connections' | 'rate'>): string {
  return `${window.scenario}|${window.connections}|${window.rate ?? 'max'}`;
}

/** Sums the windows of the same measurement (its rounds), keeping the first-seen order. */
export function mergeNetworkWindows(windows: readonly NetworkWindow[]): NetworkWindow[] {
  const merged = new Map<string, NetworkWindow>();
  for (const window of windows) {
    const key = windowKey(window);
    const sum = merged.get(key);
    if (sum === undefined) {
      merged.set(key, { ...window, redisCommands: { ...window.redisCommands } });
      continue;
    }
    sum.requests += window.requests;
    sum.seconds += window.seconds;
    sum.postgresTransactions += window.postgresTransactions;
    sum.postgresInsertedRows += window.postgresInsertedRows;
    for (const [command, calls] of Object.entries(window.redisCommands)) {
      sum.redisCommands[command] = (sum.redisCommands[command] ?? 0) + calls;
    }
  }
  return [...merged.values()];
}

const perThousand = (count: number, requests: number): number => (requests > 0 ? (count * 1_000) / requests : 0);
const round = (value: number, digits: number): number => Number(value.toFixed(digits));
const totalRedisCalls = (window: NetworkWindow): number =>
  Object.values(window.redisCommands).reduce((sum, calls) => sum + calls, 0);

/** Above this many calls per 1,000 requests (one call per 10 requests), a command looks like it is on the request path. */
export const perRequestCallThreshold = 100;

/**
 * Above this many Redis commands per second, the background timers (lease refills, budget pushes every 250 ms and
 * refreshes every 1 s, a few commands each) do not explain the traffic: something grows with the request rate.
 */
export const backgroundCallsPerSecond = 50;

/**
 * The `network` object of `bench/results/latest.json`: per measurement, the raw counts and the counts per 1,000
 * requests (Redis per command and in total, also per second), plus the ledger cross-check.
 */
export function networkDocument(windows: readonly NetworkWindow[], ledger: LedgerCheck | undefined): object {
  return {
    measurements: windows.map((window) => ({
      target: 'production',
      scenario: window.scenario,
      connections: window.connections,
      ...(window.rate === undefined ? {} : { rate: window.rate }),
      requests: window.requests,
      seconds: round(window.seconds, 2),
      redis_commands: window.redisCommands,
      redis_commands_per_1000_requests: Object.fromEntries(
        Object.entries(window.redisCommands).map(([command, calls]) => [
          command,
          round(perThousand(calls, window.requests), 3),
        ]),
      ),
      redis_total_per_1000_requests: round(perThousand(totalRedisCalls(window), window.requests), 3),
      redis_total_per_second: round(window.seconds > 0 ? totalRedisCalls(window) / window.seconds : 0, 2),
      postgres_transactions: window.postgresTransactions,
      postgres_transactions_per_1000_requests: round(perThousand(window.postgresTransactions, window.requests), 3),
      postgres_inserted_rows: window.postgresInsertedRows,
      postgres_inserted_rows_per_1000_requests: round(perThousand(window.postgresInsertedRows, window.requests), 1),
    })),
    ledger:
      ledger === undefined
        ? null
        : {
            key_rows: ledger.rows,
            completed_requests: ledger.completedRequests,
            uncounted_at_most: ledger.uncountedAtMost,
          },
  };
}

/**
 * Problems the counts show: a command or Postgres transactions at or above one per 10 requests (a call on the request
 * path), Redis traffic beyond what background timers explain, more than one ledger row per request, or ledger rows
 * missing for requests made with the key.
 */
export function networkFindings(windows: readonly NetworkWindow[], ledger: LedgerCheck | undefined): string[] {
  const findings: string[] = [];
  for (const window of windows) {
    const label = `production ${window.scenario} c${window.connections} ${window.rate === undefined ? 'max' : `${window.rate} rps`}`;
    if (window.requests === 0) {
      findings.push(`${label}: no requests completed, nothing to attribute the counts to`);
      continue;
    }
    for (const [command, calls] of Object.entries(window.redisCommands)) {
      const rate = perThousand(calls, window.requests);
      if (rate >= perRequestCallThreshold) {
        findings.push(
          `${label}: Redis ${command.toUpperCase()} ${rate.toFixed(1)} per 1,000 requests: a call on the request path`,
        );
      }
    }
    const perSecond = window.seconds > 0 ? totalRedisCalls(window) / window.seconds : 0;
    if (perSecond > backgroundCallsPerSecond) {
      findings.push(
        `${label}: ${perSecond.toFixed(0)} Redis commands per second, more than background timers explain ` +
          `(${perThousand(totalRedisCalls(window), window.requests).toFixed(1)} per 1,000 requests: not per request, ` +
          'but growing with the request rate)',
      );
    }
    const transactions = perThousand(window.postgresTransactions, window.requests);
    if (transactions >= perRequestCallThreshold) {
      findings.push(
        `${label}: ${transactions.toFixed(1)} Postgres transactions per 1,000 requests: a query on the request path`,
      );
    }
    const rows = perThousand(window.postgresInsertedRows, window.requests);
    if (rows > 1_500) {
      findings.push(`${label}: ${rows.toFixed(0)} inserted rows per 1,000 requests: more than one row per request`);
    }
  }
  if (ledger !== undefined) {
    const lowest = ledger.completedRequests;
    const highest = ledger.completedRequests + ledger.uncountedAtMost;
    if (ledger.rows < lowest || ledger.rows > highest) {
      findings.push(
        `ledger: ${ledger.rows} rows for the bench key, expected ${lowest} to ${highest} (one per request made with it)`,
      );
    }
  }
  return findings;
}

/**
 * The printed network section: one line per measurement, the Redis commands by name, and the ledger cross-check,
 * then any findings as WARNING lines.
 */
export function formatNetwork(windows: readonly NetworkWindow[], ledger: LedgerCheck | undefined): string {
  const lines: string[] = [];
  for (const window of windows) {
    const load = window.rate === undefined ? 'max' : `${window.rate} rps`;
    const commands = Object.entries(window.redisCommands)
      .sort((left, right) => right[1] - left[1])
      .map(([command, calls]) => `${command} ${perThousand(calls, window.requests).toFixed(2)}`)
      .join(', ');
    const redisTotal = totalRedisCalls(window);
    lines.push(
      `production ${window.scenario} c${window.connections} ${load}: ${window.requests} requests in ` +
        `${window.seconds.toFixed(1)} s; per 1,000 requests: Redis ${perThousand(redisTotal, window.requests).toFixed(2)} ` +
        `commands (${(window.seconds > 0 ? redisTotal / window.seconds : 0).toFixed(1)}/s), ` +
        `Postgres ${perThousand(window.postgresTransactions, window.requests).toFixed(2)} transactions and ` +
        `${perThousand(window.postgresInsertedRows, window.requests).toFixed(0)} inserted rows`,
    );
    lines.push(`  Redis by command per 1,000 requests: ${commands === '' ? 'none' : commands}`);
  }
  lines.push(
    '(INFO commandstats also counts what Lua scripts run inside Redis: each limit-store EVALSHA runs a GET and a SET ' +
      'there, which are not round trips)',
  );
  if (ledger !== undefined) {
    lines.push(
      `ledger rows for the bench key after production exited: ${ledger.rows} for ${ledger.completedRequests} completed ` +
        `requests (wrk leaves up to ${ledger.uncountedAtMost} in-flight requests uncounted)`,
    );
  }
  for (const finding of networkFindings(windows, ledger)) lines.push(`WARNING: ${finding}`);
  return lines.join('\n');
}
