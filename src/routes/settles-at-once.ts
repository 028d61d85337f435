/**
 * Whether `promise` is settled (fulfilled or rejected) a microtask after this call: true for a read of bytes that are
 * already there, false for one that waits for the network. Callers arm a timeout only for the second kind: a timer set
 * and cleared costs more than this check, and on Node far more when requests come one at a time (the timer list of its
 * duration is created and dropped with each one). A rejection is marked handled here; awaiting `promise` afterwards
 * still throws it.
 *
 * @example
 * const read = reader.read();
 * if (!(await settlesAtOnce(read))) timer = setTimeout(onSilence, idleTimeoutMs);
 * const { done, value } = await read;
 */
export async function settlesAtOnce(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  const mark = (): void => {
    settled = true;
  };
  promise.then(mark, mark);
  // A settled promise's reaction was queued above, so it runs before this function resumes.
  await undefined;
  return settled;
}
