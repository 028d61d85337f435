/**
 * The timers background work runs on: the platform's by default, a manual clock in tests
 * (see usage-queue-test-timers.ts). Handles are opaque.
 */
export interface BackgroundTimers {
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * The platform timers. On runtimes whose timer handles have `unref` (Node, Deno), the handle is unref'd so a pending
 * batch or retry never keeps a process alive on its own: shutdown flushes explicitly instead.
 */
export const platformTimers: BackgroundTimers = {
  setTimeout(callback, delayMs) {
    const handle: unknown = globalThis.setTimeout(callback, delayMs);
    if (typeof handle === 'object' && handle !== null && 'unref' in handle && typeof handle.unref === 'function') {
      handle.unref();
    }
    return handle;
  },
  clearTimeout(handle) {
    globalThis.clearTimeout(handle as Parameters<typeof globalThis.clearTimeout>[0]);
  },
};
