/**
 * Waits for a server's shutdown (it stopped accepting and lets in-flight requests finish) for at most `graceMs`;
 * answers whether it finished in time. The timer is cleared either way.
 *
 * @example
 * const complete = await drainWithinGrace(server.shutdown(), settings.shutdownGraceMs);
 */
export async function drainWithinGrace(shutdown: Promise<unknown>, graceMs: number): Promise<boolean> {
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  const complete = await Promise.race([
    shutdown.then(() => true),
    new Promise<false>((resolve) => (graceTimer = setTimeout(() => resolve(false), graceMs))),
  ]);
  clearTimeout(graceTimer);
  return complete;
}
