import * as fileSystem from 'node:fs/promises';
import { StartupError } from './startup-error.ts';

/**
 * The default free-space reserve of the data directory: 64 MiB. PGlite must never write into the last bytes of its
 * disk: when Postgres cannot create its next 16 MiB WAL segment it panics, and PGlite (WebAssembly, in-process) then
 * spins at 100% CPU forever instead of failing. So writes stop (and fail, counted and logged) while less than this is
 * free, and the usage spill leaves the same room.
 */
export const defaultMinFreeBytes = 64 * 1024 * 1024;

/** `TORII_DATA_DIR_MIN_FREE_BYTES` (a whole number of bytes, 0 = no reserve), default {@link defaultMinFreeBytes}. */
export function readMinFreeBytes(environment: Record<string, string | undefined>): number {
  const value = environment.TORII_DATA_DIR_MIN_FREE_BYTES;
  if (value === undefined || value === '') return defaultMinFreeBytes;
  if (!/^\d+$/.test(value.trim()))
    throw new StartupError('TORII_DATA_DIR_MIN_FREE_BYTES', `must be a whole number of bytes, got "${value}"`);
  return Number(value);
}

/** How much room a directory's file system has, with a reserve it must keep. */
export interface FreeSpaceCheck {
  /** Bytes available to this process, or undefined where the runtime cannot tell (then nothing is refused). */
  freeBytes(): Promise<number | undefined>;
  /** Throws an `ENOSPC` error naming the directory when less than the reserve is free. */
  ensure(): Promise<void>;
}

function mebibytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * A free-space check for `directory` (`statfs`), cached for `cacheMs` (default 1 s) so a burst of writes asks once.
 *
 * @example
 * const space = createFreeSpaceCheck('/var/lib/torii', 64 * 1024 * 1024);
 * await space.ensure(); // throws ENOSPC when less than 64 MiB is free
 */
export function createFreeSpaceCheck(
  directory: string,
  minFreeBytes: number,
  options: { cacheMs?: number; now?: () => number } = {},
): FreeSpaceCheck {
  const cacheMs = options.cacheMs ?? 1_000;
  const now = options.now ?? Date.now;
  let cached: { at: number; bytes: number | undefined } | undefined;
  const freeBytes = async (): Promise<number | undefined> => {
    if (cached !== undefined && now() - cached.at < cacheMs) return cached.bytes;
    let bytes: number | undefined;
    try {
      const stats = await fileSystem.statfs(directory);
      bytes = Number(stats.bavail) * Number(stats.bsize);
    } catch {
      // No statfs here (some runtimes), or the directory is gone: the write itself will tell.
      bytes = undefined;
    }
    cached = { at: now(), bytes };
    return bytes;
  };
  return {
    freeBytes,
    async ensure() {
      if (minFreeBytes <= 0) return;
      const bytes = await freeBytes();
      if (bytes === undefined || bytes >= minFreeBytes) return;
      throw Object.assign(
        new Error(
          `no space left in ${directory}: ${mebibytes(bytes)} free, below the reserve of ${mebibytes(minFreeBytes)} (TORII_DATA_DIR_MIN_FREE_BYTES)`,
        ),
        { code: 'ENOSPC' },
      );
    },
  };
}
