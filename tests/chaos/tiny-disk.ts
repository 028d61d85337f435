import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, rmdirSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A small tmpfs of the test's own, to run the gateway's data directory out of space. */
export interface TinyDisk {
  /** Where it is mounted. */
  path: string;
  /** Fills every free byte with a filler file (until the kernel answers ENOSPC). */
  fill(): void;
  /** Deletes the filler file. */
  free(): void;
  /** Unmounts it and removes the mount point. */
  remove(): void;
}

/**
 * Mounts a tmpfs of `size` (e.g. `160m`) on a new temporary directory. Needs root (`mount -t tmpfs`), as the chaos
 * suite has locally and in CI; without it this throws, saying so (the test fails rather than skips).
 */
export function mountTinyDisk(size: string): TinyDisk {
  const path = mkdtempSync(join(tmpdir(), 'torii-chaos-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', path], { stdio: 'pipe' });
  } catch (error) {
    rmdirSync(path);
    throw new Error(
      `cannot mount a ${size} tmpfs on ${path} (the full-disk chaos test needs root): ${String((error as Error).message)}`,
      { cause: error },
    );
  }
  const filler = join(path, 'filler');
  return {
    path,
    fill() {
      const descriptor = openSync(filler, 'a');
      try {
        // Megabytes until the kernel refuses, then ever smaller pieces, down to the last byte.
        for (let size = 1024 * 1024; size >= 1; size = Math.floor(size / 2)) {
          const chunk = Buffer.alloc(size, 7);
          for (;;) {
            try {
              writeSync(descriptor, chunk);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
              break;
            }
          }
        }
      } finally {
        closeSync(descriptor);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    remove() {
      try {
        execFileSync('umount', ['-l', path], { stdio: 'pipe' });
      } finally {
        rmSync(path, { recursive: true, force: true });
      }
    },
  };
}
