import type { GatewayLogger } from '../../src/services.ts';
import type { UsageQueue, UsageQueueStats } from '../../src/usage/usage-queue.ts';
import type { UsageSpillHealth } from './usage-spill-files.ts';

/** What {@link startUsageLedgerMonitor} watches and where it reports. */
export interface UsageLedgerMonitorOptions {
  queue: Pick<UsageQueue, 'stats'>;
  logger: GatewayLogger;
  /** The disk spill's health; absent when there is no spill (then a failing sink alone means "cannot persist"). */
  spillHealth?: () => Promise<UsageSpillHealth>;
  /**
   * What the log lines call the queue's writes (default `usage ledger`; a cluster worker's queue, which hands its
   * events to the primary, is `usage hand-over to the primary`).
   */
  label?: string;
  /** How often the queue's counters are read, ms (default 1,000). */
  intervalMs?: number;
  /** While a problem lasts, how often it is logged again (with what happened since), ms (default 30,000). */
  repeatLogMs?: number;
  now?: () => number;
}

/** The ledger's health, as readiness and the logs see it. */
export interface UsageLedgerMonitor {
  /**
   * False while usage cannot be persisted anywhere: events were lost since the last check, or the database is failing
   * and the spill cannot take events either. `/health/ready` answers 503 meanwhile.
   */
  canPersist(): boolean;
  /** Called with the new value whenever {@link UsageLedgerMonitor.canPersist} changes. */
  onChange(listener: (canPersist: boolean) => void): void;
  /** Reads the counters now (the timer does it every `intervalMs`). */
  check(): Promise<void>;
  stop(): void;
}

/**
 * Watches a usage queue's counters (`usageQueue.stats()`) so failures are never silent: a failing database write, a
 * spill that cannot take events, and lost events are each logged at error level, once when they start, again every
 * `repeatLogMs` while they last (with counts, never one line per event), and once when they end. Error texts come
 * from the queue, which receives them already redacted by the database layer (database-errors.ts).
 *
 * @example
 * const monitor = startUsageLedgerMonitor({ queue: stores.usageQueue, logger, spillHealth: () => spill.health() });
 * createGateway({ ..., services: { isReady: () => accepting && monitor.canPersist() } });
 */
export function startUsageLedgerMonitor(options: UsageLedgerMonitorOptions): UsageLedgerMonitor {
  const { queue, logger } = options;
  const now = options.now ?? Date.now;
  const repeatLogMs = options.repeatLogMs ?? 30_000;
  const label = options.label ?? 'usage ledger';
  const listeners: ((canPersist: boolean) => void)[] = [];
  let last: UsageQueueStats = queue.stats();
  let canPersist = true;
  /** When the sink started failing, and when that was last logged (failures and losses since then). */
  let failing: { since: number; loggedAt: number; failuresAtLog: number } | undefined;
  let losing: { loggedAt: number; droppedAtLog: number } | undefined;
  let spillDown: string | undefined;
  let checking: Promise<void> | undefined;

  const writeError = (stats: UsageQueueStats): string | undefined => stats.lastWriteError?.message;
  const spillError = (stats: UsageQueueStats): string | undefined => stats.lastSpillError?.message;

  const runCheck = async (): Promise<void> => {
    const stats = queue.stats();
    const at = now();
    const lostNow = stats.dropped - last.dropped;
    const sinkFailing = stats.consecutiveFailedWrites > 0;

    if (sinkFailing && failing === undefined) {
      failing = { since: at, loggedAt: at, failuresAtLog: stats.failedWrites };
      logger.error(`${label} writes are failing; retrying, events wait in memory and then in the spill`, {
        error: writeError(stats),
        failedWrites: stats.failedWrites,
        queued: stats.queued,
      });
    } else if (sinkFailing && failing !== undefined && at - failing.loggedAt >= repeatLogMs) {
      logger.error(`${label} writes are still failing`, {
        error: writeError(stats),
        failuresSinceLastLog: stats.failedWrites - failing.failuresAtLog,
        failingForMs: at - failing.since,
        queued: stats.queued,
        spilled: stats.spilled,
      });
      failing.loggedAt = at;
      failing.failuresAtLog = stats.failedWrites;
    } else if (!sinkFailing && failing !== undefined) {
      logger.info(`${label} writes recovered`, { failingForMs: at - failing.since });
      failing = undefined;
    }

    if (lostNow > 0 && (losing === undefined || at - losing.loggedAt >= repeatLogMs)) {
      logger.error('usage events lost', {
        where: label,
        lost: stats.dropped - (losing?.droppedAtLog ?? last.dropped),
        lostTotal: stats.dropped,
        error: spillError(stats),
      });
      losing = { loggedAt: at, droppedAtLog: stats.dropped };
    } else if (lostNow === 0 && losing !== undefined && at - losing.loggedAt >= repeatLogMs) {
      if (stats.dropped > losing.droppedAtLog) {
        logger.error('usage events lost', {
          where: label,
          lost: stats.dropped - losing.droppedAtLog,
          lostTotal: stats.dropped,
        });
      }
      losing = undefined;
    }

    let spillWritable = options.spillHealth === undefined ? false : true;
    if (sinkFailing && options.spillHealth !== undefined) {
      const health = await options.spillHealth().catch((error: unknown): UsageSpillHealth => ({
        writable: false,
        freeBytes: undefined,
        reason: error instanceof Error ? error.message : String(error),
      }));
      spillWritable = health.writable;
      if (!health.writable && spillDown === undefined) {
        spillDown = health.reason ?? 'not writable';
        logger.error('usage spill cannot take events', { reason: spillDown, freeBytes: health.freeBytes });
      } else if (health.writable && spillDown !== undefined) {
        logger.info('usage spill can take events again');
        spillDown = undefined;
      }
    }

    const next = lostNow === 0 && (!sinkFailing || spillWritable);
    last = stats;
    if (next !== canPersist) {
      canPersist = next;
      if (next) logger.info(`${label} can persist again; ready`);
      else
        logger.error(`${label} cannot persist usage; not ready`, {
          writeError: writeError(stats),
          spillError: spillError(stats) ?? spillDown,
        });
      for (const listener of listeners) listener(next);
    }
  };

  const check = (): Promise<void> => {
    checking ??= runCheck().finally(() => (checking = undefined));
    return checking;
  };

  const timer = setInterval(() => void check(), options.intervalMs ?? 1_000);
  (timer as { unref?: () => void }).unref?.();
  return {
    canPersist: () => canPersist,
    onChange: (listener) => void listeners.push(listener),
    check,
    stop: () => clearInterval(timer),
  };
}
