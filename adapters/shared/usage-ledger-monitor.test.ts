import { describe, expect, it } from 'vitest';
import type { UsageQueueStats } from '../../src/usage/usage-queue.ts';
import { emptyUsageQueueStats } from '../../src/usage/usage-queue-options.ts';
import { recordingLogger } from '../../tests/support/recording-logger.ts';
import { startUsageLedgerMonitor } from './usage-ledger-monitor.ts';
import type { UsageSpillHealth } from './usage-spill-files.ts';

const baseStats = (): UsageQueueStats => emptyUsageQueueStats();

function setUp() {
  const stats = baseStats();
  let clock = 0;
  let spill: UsageSpillHealth = { writable: true, freeBytes: 1e9 };
  const { logger, lines } = recordingLogger();
  const changes: boolean[] = [];
  const monitor = startUsageLedgerMonitor({
    queue: { stats: () => ({ ...stats }) },
    logger,
    spillHealth: async () => spill,
    intervalMs: 60_000,
    repeatLogMs: 30_000,
    now: () => clock,
  });
  monitor.onChange((canPersist) => changes.push(canPersist));
  return {
    stats,
    monitor,
    lines,
    changes,
    setSpill: (next: UsageSpillHealth) => (spill = next),
    advance: (ms: number) => (clock += ms),
  };
}

describe('startUsageLedgerMonitor', () => {
  it('stays ready while the database fails but the spill can take events, and says so once', async () => {
    const { stats, monitor, lines, changes, advance } = setUp();
    stats.failedWrites = 1;
    stats.consecutiveFailedWrites = 1;
    stats.lastWriteError = { message: 'database unavailable: connect ECONNREFUSED', at: 0 };
    await monitor.check();
    advance(1_000);
    stats.failedWrites = 2;
    stats.consecutiveFailedWrites = 2;
    await monitor.check();
    expect(monitor.canPersist()).toBe(true);
    expect(changes).toEqual([]);
    expect(lines).toEqual([
      {
        level: 'error',
        message: 'usage ledger writes are failing; retrying, events wait in memory and then in the spill',
      },
    ]);
    stats.consecutiveFailedWrites = 0;
    await monitor.check();
    expect(lines.at(-1)).toEqual({ level: 'info', message: 'usage ledger writes recovered' });
    monitor.stop();
  });

  it('turns not ready while the database fails and the spill is full, and ready again after', async () => {
    const { stats, monitor, lines, changes, setSpill } = setUp();
    stats.failedWrites = 3;
    stats.consecutiveFailedWrites = 3;
    setSpill({ writable: false, freeBytes: 0, reason: 'no space left' });
    await monitor.check();
    expect(monitor.canPersist()).toBe(false);
    expect(lines.map((line) => line.message)).toContain('usage spill cannot take events');
    expect(lines.at(-1)).toEqual({ level: 'error', message: 'usage ledger cannot persist usage; not ready' });
    setSpill({ writable: true, freeBytes: 1e9 });
    await monitor.check();
    expect(monitor.canPersist()).toBe(true);
    expect(changes).toEqual([false, true]);
    monitor.stop();
  });

  it('logs lost events at once, then at most every repeat interval with the count since', async () => {
    const { stats, monitor, lines, advance } = setUp();
    stats.dropped = 5;
    await monitor.check();
    expect(monitor.canPersist()).toBe(false);
    for (let second = 0; second < 10; second++) {
      advance(1_000);
      stats.dropped += 7;
      await monitor.check();
    }
    const lost = lines.filter((line) => line.message.startsWith('usage events lost'));
    expect(lost).toHaveLength(1);
    advance(30_000);
    stats.dropped += 1;
    await monitor.check();
    expect(lines.filter((line) => line.message.startsWith('usage events lost'))).toHaveLength(2);
    advance(1_000);
    await monitor.check();
    expect(monitor.canPersist()).toBe(true);
    monitor.stop();
  });
});
