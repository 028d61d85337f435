/**
 * Lowers the calling thread's scheduling priority by `niceness` steps (relative to the process's own, at most 19) on
 * Linux: a thread given to background database work then yields to the thread that serves requests when both share
 * a core, and still gets about a tenth of it while the request thread is saturated. Anywhere else (no
 * `/proc/thread-self`), on Deno (its `os.setPriority` needs `--allow-sys`, and asking would prompt in a terminal), or
 * when refused, nothing changes. Self-contained (no imports, built-ins through `process.getBuiltinModule`): the SQLite
 * thread runs it as source text.
 *
 * @example
 * ```ts
 * lowerThreadPriority(10); // first thing in a worker thread's program
 * ```
 */
export function lowerThreadPriority(niceness: number): void {
  if (!(niceness > 0) || 'Deno' in globalThis) return;
  try {
    const threadId = Number(process.getBuiltinModule('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
    const os = process.getBuiltinModule('node:os');
    if (Number.isInteger(threadId) && threadId > 0)
      os.setPriority(threadId, Math.min(19, os.getPriority(threadId) + niceness));
  } catch {
    // No /proc (macOS, Windows) or no permission: the thread runs at the process's priority.
  }
}
