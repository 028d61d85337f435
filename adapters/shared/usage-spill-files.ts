import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { UsageEvent, UsageSpill } from '../../src/usage/usage-event.ts';
import { createFreeSpaceCheck } from './data-directory-space.ts';

/** What {@link openFileUsageSpill} is made with. */
export interface FileUsageSpillOptions {
  /** The spill directory (the gateway uses `TORII_DATA_DIR/usage-spill`); created when missing. Local disk only. */
  directory: string;
  /** A segment is closed for appends once it holds this many bytes (default 4 MiB, about 8,000 events). */
  maxSegmentBytes?: number;
  /** How often this process marks itself alive, in ms (default 10,000). */
  heartbeatMs?: number;
  /** A process whose mark is older than this is taken for dead and its segments are adopted, in ms (default 60,000). */
  staleAfterMs?: number;
  /**
   * Free space the spill leaves on its disk, in bytes (default 0): an append that would need it fails with ENOSPC
   * instead. The gateway passes TORII_DATA_DIR_MIN_FREE_BYTES, so the spill never takes the room PGlite must keep.
   */
  minFreeBytes?: number;
}

/** Whether the spill can take events now. */
export interface UsageSpillHealth {
  /** False while its disk has less than the reserve free, or shortly after an append failed. */
  writable: boolean;
  /** Bytes free on its disk, when the runtime can tell. */
  freeBytes: number | undefined;
  /** Why it is not writable. */
  reason?: string;
}

/** The file spill, with what the {@link UsageSpill} seam does not cover. */
export interface FileUsageSpill extends UsageSpill {
  /** This process's name in segment file names: `<pid>-<random>`. */
  readonly instanceId: string;
  /** Lines skipped while reading segments: a torn last line after a crash, or a corrupt one. */
  readonly skippedLines: number;
  /** Stops the heartbeat after pending appends and replays, and lets other processes adopt what is left at once. */
  close(): Promise<void>;
  /** Whether an append would find room now (free space above the reserve, no recent failure). */
  health(): Promise<UsageSpillHealth>;
}

/** How long after a failed append the spill counts as not writable, unless an append succeeds sooner. */
const failedAppendMemoryMs = 10_000;
/** Room an append needs at least, even with no reserve: one batch of events. */
const minimumAppendBytes = 64 * 1024;

const segmentPattern = /^(\d{15}-\d{6})-([\da-z-]+)\.([\da-z-]+)\.jsonl$/;
const aliveSuffix = '.alive';

/**
 * A {@link UsageSpill} as append-only JSON-lines segment files in a directory, one event per line.
 *
 * - **Append**: each batch is written to this process's open segment with one `write` and one `fsync` before the
 *   promise resolves (the directory is fsync'd too when a segment is created). A failed append closes the segment,
 *   so a half-written line is never followed by good ones in the same file.
 * - **Replay**: closes the open segment, then hands segments to `write` oldest first (names start with the creation
 *   time) and deletes each only after `write` resolved. A crash mid-replay replays that segment again: delivery is at
 *   least once and the sink is idempotent on `requestId`.
 * - **Several processes, restarts**: segment names carry the writing process (`<time>-<seq>-<origin>.<owner>.jsonl`).
 *   A process touches only its own segments, and adopts (by an atomic rename to its own name) those of a process that
 *   is dead: its pid no longer exists, or its heartbeat file (`<owner>.alive`, touched every `heartbeatMs`) is older
 *   than `staleAfterMs` or gone (removed by a clean `close()`). So Node cluster workers can share one directory, and
 *   a new process replays what a dead one left. Runs on Node and Deno (`--allow-read --allow-write`); Deno asks
 *   about pids only with `--allow-run`, so without it a crashed process's segments wait for its stale heartbeat. A process stalled longer than `staleAfterMs` can lose the batch it was appending at that moment to
 *   an adopter; keep `staleAfterMs` far above any event-loop stall.
 * - **Torn lines**: a line without its newline (a crash mid-write) or that does not parse is skipped and counted.
 *
 * @example
 * ```ts
 * const spill = await openFileUsageSpill({ directory: join(environment.TORII_DATA_DIR, 'usage-spill') });
 * const queue = createUsageQueue({ sink, spill });
 * ```
 */
export async function openFileUsageSpill(options: FileUsageSpillOptions): Promise<FileUsageSpill> {
  const directory = options.directory;
  const maxSegmentBytes = options.maxSegmentBytes ?? 4 * 1024 * 1024;
  const heartbeatMs = options.heartbeatMs ?? 10_000;
  const staleAfterMs = options.staleAfterMs ?? 60_000;
  const instanceId = `${process.pid}-${randomUUID().slice(0, 8)}`;
  const aliveFile = join(directory, instanceId + aliveSuffix);
  const minFreeBytes = options.minFreeBytes ?? 0;
  const space = createFreeSpaceCheck(directory, minFreeBytes);
  let lastFailure: { at: number; reason: string } | undefined;

  await mkdir(directory, { recursive: true });
  await writeFile(aliveFile, '');
  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(aliveFile, now, now).catch(() => writeFile(aliveFile, '').catch(() => {}));
  }, heartbeatMs);
  heartbeat.unref();

  let active: string | undefined;
  let activeBytes = 0;
  let sequence = 0;
  let skippedLines = 0;
  let appendChain: Promise<unknown> = Promise.resolve();
  let replayChain: Promise<unknown> = Promise.resolve();

  const serial = <T>(chain: 'append' | 'replay', task: () => Promise<T>): Promise<T> => {
    const previous = chain === 'append' ? appendChain : replayChain;
    const result = previous.then(task, task);
    const settled = result.catch(() => {});
    if (chain === 'append') appendChain = settled;
    else replayChain = settled;
    return result;
  };

  const newSegmentName = () =>
    `${String(Date.now()).padStart(15, '0')}-${String(sequence++ % 1_000_000).padStart(6, '0')}-${instanceId}.${instanceId}.jsonl`;

  async function appendBatch(events: readonly UsageEvent[]): Promise<void> {
    if (events.length === 0) return;
    const text = events.map((event) => JSON.stringify(event) + '\n').join('');
    const bytes = Buffer.byteLength(text);
    const created = active === undefined || (activeBytes > 0 && activeBytes + bytes > maxSegmentBytes);
    if (created) {
      active = newSegmentName();
      activeBytes = 0;
    }
    const segment = active as string;
    try {
      await space.ensure();
      // Opened per append rather than held: if an adopter renamed the file, the next append starts a new one.
      const handle = await open(join(directory, segment), 'a');
      try {
        await handle.writeFile(text);
        await handle.sync();
      } finally {
        await handle.close();
      }
      if (created) await syncDirectory(directory);
    } catch (error) {
      active = undefined;
      lastFailure = { at: Date.now(), reason: error instanceof Error ? error.message : String(error) };
      throw error;
    }
    lastFailure = undefined;
    activeBytes += bytes;
  }

  async function isDead(owner: string): Promise<boolean> {
    const pid = Number(owner.split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && !processExists(pid)) return true;
    try {
      const mark = await stat(join(directory, owner + aliveSuffix));
      return Date.now() - mark.mtimeMs > staleAfterMs;
    } catch {
      return true;
    }
  }

  async function replayAll(write: (events: readonly UsageEvent[]) => Promise<void>): Promise<number> {
    // Close the open segment: appends from now on go to a new one, which the next replay picks up.
    await serial('append', async () => {
      active = undefined;
    });
    const dead = new Map<string, boolean>();
    let replayed = 0;
    for (const name of (await readdir(directory)).sort()) {
      const parts = segmentPattern.exec(name);
      if (parts === null) continue;
      const [, stamp, origin, owner] = parts as unknown as [string, string, string, string];
      let segment = name;
      if (owner !== instanceId) {
        if (!dead.has(owner)) dead.set(owner, await isDead(owner));
        if (dead.get(owner) !== true) continue;
        segment = `${stamp}-${origin}.${instanceId}.jsonl`;
        try {
          await rename(join(directory, name), join(directory, segment));
        } catch (error) {
          if (isMissing(error)) continue; // another process adopted it first
          throw error;
        }
      }
      if (segment === active) continue;
      let text: string;
      try {
        text = await readFile(join(directory, segment), 'utf8');
      } catch (error) {
        if (isMissing(error)) continue;
        throw error;
      }
      const { events, skipped } = parseSegment(text);
      skippedLines += skipped;
      if (events.length > 0) await write(events);
      await unlink(join(directory, segment));
      replayed += events.length;
    }
    for (const [owner, isOwnerDead] of dead) {
      if (isOwnerDead) await unlink(join(directory, owner + aliveSuffix)).catch(() => {});
    }
    return replayed;
  }

  return {
    instanceId,
    get skippedLines() {
      return skippedLines;
    },
    append: (events) => serial('append', () => appendBatch(events)),
    replay: (write) => serial('replay', () => replayAll(write)),
    async size() {
      let count = 0;
      for (const name of await readdir(directory)) {
        if (!segmentPattern.test(name)) continue;
        try {
          count += parseSegment(await readFile(join(directory, name), 'utf8')).events.length;
        } catch (error) {
          if (!isMissing(error)) throw error;
        }
      }
      return count;
    },
    async health() {
      const freeBytes = await space.freeBytes();
      if (freeBytes !== undefined && freeBytes < Math.max(minFreeBytes, minimumAppendBytes)) {
        return {
          writable: false,
          freeBytes,
          reason: `no space left in ${directory}: ${freeBytes} bytes free, the reserve is ${minFreeBytes}`,
        };
      }
      if (lastFailure !== undefined && Date.now() - lastFailure.at < failedAppendMemoryMs) {
        return { writable: false, freeBytes, reason: lastFailure.reason };
      }
      return { writable: true, freeBytes };
    },
    async close() {
      clearInterval(heartbeat);
      await Promise.all([appendChain, replayChain]);
      await unlink(aliveFile).catch(() => {});
    },
  };
}

/** The complete, parsable events of a segment, and how many lines were skipped (torn or corrupt). */
export function parseSegment(text: string): { events: UsageEvent[]; skipped: number } {
  const lines = text.split('\n');
  // After the last newline: empty for a complete file, a torn line after a crash mid-write.
  const torn = lines.pop() ?? '';
  let skipped = torn.length > 0 ? 1 : 0;
  const events: UsageEvent[] = [];
  for (const line of lines) {
    if (line.length === 0) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === 'object' && value !== null && typeof (value as UsageEvent).requestId === 'string') {
        events.push(value as UsageEvent);
        continue;
      }
    } catch {
      // counted below
    }
    skipped += 1;
  }
  return { events, skipped };
}

/**
 * Whether a process may exist: false only when the system says there is none (ESRCH). Any other answer counts as
 * alive and leaves the decision to the heartbeat: EPERM (it exists but belongs to someone else), and Deno without
 * `--allow-run`, where `process.kill` is refused with a permission error before asking the system.
 */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

async function syncDirectory(directory: string): Promise<void> {
  try {
    const handle = await open(directory, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some platforms (Windows) cannot fsync a directory; the file itself was fsync'd.
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
