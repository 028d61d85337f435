import { describe, expect, it } from 'vitest';
import { createUsageQueue } from './usage-queue.ts';
import type { UsageQueueOptions } from './usage-queue-options.ts';
import { retryDelayMs } from './usage-queue-backoff.ts';
import { createTestUsageSink, createTestUsageSpill, type TestUsageSink } from './usage-queue-test-sink.ts';
import { createManualTimers } from './usage-queue-test-timers.ts';
import { testUsageEvent } from './usage-queue-test-events.ts';

function setup(options: Partial<UsageQueueOptions> = {}) {
  const clock = createManualTimers();
  const sink = createTestUsageSink();
  const queue = createUsageQueue({
    sink,
    maxBatchSize: 10,
    maxDelayMs: 1000,
    retryBackoff: { baseMs: 100, capMs: 1000, jitter: 0 },
    timers: clock.timers,
    now: clock.now,
    ...options,
  });
  const enqueueRange = (from: number, to: number) => {
    for (let index = from; index < to; index++) queue.enqueue(testUsageEvent(index));
  };
  return { clock, sink, queue, enqueueRange };
}

/** Asserts the sink holds exactly the events numbered [0, count), each once. */
function expectExactlyOnce(sink: TestUsageSink, count: number): void {
  expect(sink.stored.size).toBe(count);
  for (let index = 0; index < count; index++) expect(sink.stored.has(`request-${index}`)).toBe(true);
}

describe('createUsageQueue batching', () => {
  it('writes a batch as soon as it is full', async () => {
    const { clock, sink, enqueueRange } = setup();
    enqueueRange(0, 25);
    await clock.settle();
    expect(sink.storedBatchSizes).toEqual([10, 10]);
  });

  it('writes a partial batch after maxDelayMs, not before', async () => {
    const { clock, sink, queue, enqueueRange } = setup();
    enqueueRange(0, 3);
    await clock.advance(999);
    expect(sink.storedBatchSizes).toEqual([]);
    expect(queue.stats().queued).toBe(3);
    await clock.advance(1);
    expect(sink.storedBatchSizes).toEqual([3]);
    expect(queue.stats()).toMatchObject({ queued: 0, written: 3, failedWrites: 0, dropped: 0 });
  });

  it('times each batch from its first event', async () => {
    const { clock, sink, enqueueRange } = setup();
    enqueueRange(0, 1);
    await clock.advance(600);
    enqueueRange(1, 2);
    await clock.advance(400);
    expect(sink.storedBatchSizes).toEqual([2]);
    enqueueRange(2, 3);
    await clock.advance(999);
    expect(sink.storedBatchSizes).toEqual([2]);
    await clock.advance(1);
    expect(sink.storedBatchSizes).toEqual([2, 1]);
  });

  it('has one write in flight at a time', async () => {
    const { clock, sink, enqueueRange } = setup({ writeTimeoutMs: 60_000 });
    sink.mode = 'hang';
    enqueueRange(0, 50);
    await clock.settle();
    expect(sink.writeCalls).toBe(1);
    sink.mode = 'accept';
    sink.releaseHung('accept');
    await clock.settle();
    expect(sink.storedBatchSizes).toEqual([10, 10, 10, 10, 10]);
  });
});

describe('createUsageQueue retries', () => {
  it('backs off exponentially up to the cap while the sink fails, then writes', async () => {
    const { clock, sink, queue, enqueueRange } = setup();
    const attempts: number[] = [];
    const write = sink.write.bind(sink);
    sink.write = (events) => {
      attempts.push(clock.now());
      return write(events);
    };
    sink.mode = 'fail';
    enqueueRange(0, 10);
    await clock.advance(3500);
    // Delays 100, 200, 400, 800, then capped at 1000.
    expect(attempts).toEqual([0, 100, 300, 700, 1500, 2500, 3500]);
    expect(queue.stats()).toMatchObject({ failedWrites: 7, written: 0, queued: 10 });
    expect(queue.stats().lastError).toEqual({ message: 'sink unavailable', at: 3500 });
    sink.mode = 'accept';
    await clock.advance(1000);
    expect(attempts.at(-1)).toBe(4500);
    expectExactlyOnce(sink, 10);
    // Success resets the backoff: the next failure waits the base delay again.
    sink.mode = 'fail';
    enqueueRange(10, 20);
    await clock.advance(100);
    expect(attempts.slice(-2)).toEqual([4500, 4600]);
  });

  it('shortens delays by up to the jitter fraction', () => {
    const backoff = { baseMs: 100, capMs: 1000, jitter: 0.5 };
    expect(retryDelayMs(1, backoff, () => 0)).toBe(100);
    expect(retryDelayMs(3, backoff, () => 0.5)).toBe(300);
    expect(retryDelayMs(3, backoff, () => 0.999_999)).toBe(200);
    expect(retryDelayMs(40, backoff, () => 0)).toBe(1000);
    expect(retryDelayMs(2000, { baseMs: 100, capMs: 5000, jitter: 0 }, () => 0)).toBe(5000);
  });

  it('keeps queueing new events while the sink fails', async () => {
    const { clock, sink, queue, enqueueRange } = setup({ maxQueued: 1000 });
    sink.mode = 'fail';
    enqueueRange(0, 10);
    await clock.advance(50);
    enqueueRange(10, 95);
    await clock.advance(1000);
    expect(queue.stats()).toMatchObject({ queued: 95, written: 0, dropped: 0 });
    sink.mode = 'accept';
    await clock.advance(2000);
    expectExactlyOnce(sink, 95);
    expect(queue.stats().queued).toBe(0);
  });

  it('treats a hung write as failed after writeTimeoutMs, and a late landing as a harmless re-delivery', async () => {
    const { clock, sink, queue, enqueueRange } = setup({ writeTimeoutMs: 5000 });
    sink.mode = 'hang';
    enqueueRange(0, 10);
    await clock.advance(4999);
    expect(queue.stats().failedWrites).toBe(0);
    await clock.advance(1);
    expect(queue.stats().failedWrites).toBe(1);
    expect(queue.stats().lastError?.message).toBe('usage sink write timed out after 5000 ms');
    sink.mode = 'accept';
    await clock.advance(100);
    expectExactlyOnce(sink, 10);
    sink.releaseHung('accept');
    expect(sink.redelivered).toBe(10);
    expectExactlyOnce(sink, 10);
  });
});

describe('createUsageQueue overflow', () => {
  it('moves the oldest batches to the spill when memory is full, and replays them after recovery', async () => {
    const spill = createTestUsageSpill();
    const { clock, sink, queue, enqueueRange } = setup({ spill, maxQueued: 30 });
    sink.mode = 'fail';
    for (let index = 0; index < 100; index++) {
      enqueueRange(index, index + 1);
      expect(queue.stats().queued).toBeLessThanOrEqual(30);
      // Requests finish over many ticks; the spill's appends complete between them.
      if (index % 10 === 9) await clock.settle();
    }
    await clock.settle();
    expect(queue.stats()).toMatchObject({ queued: 30, spilled: 70, dropped: 0, spilling: 0 });
    // The oldest went to the spill: the first spilled chunk starts at event 0.
    expect(spill.chunks[0]?.[0]?.requestId).toBe('request-0');
    sink.mode = 'accept';
    await clock.advance(5000);
    expectExactlyOnce(sink, 100);
    expect(sink.redelivered).toBe(0);
    expect(await spill.size()).toBe(0);
    expect(queue.stats()).toMatchObject({ queued: 0, written: 100, replayed: 70, spilled: 70, dropped: 0 });
  });

  it('drops and counts the oldest batches when there is no spill', async () => {
    const { clock, sink, queue, enqueueRange } = setup({ maxQueued: 30 });
    sink.mode = 'fail';
    enqueueRange(0, 100);
    await clock.settle();
    expect(queue.stats()).toMatchObject({ queued: 30, dropped: 70 });
    sink.mode = 'accept';
    await clock.advance(5000);
    expect(sink.stored.size).toBe(30);
    // The newest survived.
    expect(sink.stored.has('request-99')).toBe(true);
    expect(sink.stored.has('request-69')).toBe(false);
  });

  it('counts events as dropped when the spill fails, and says why', async () => {
    const spill = createTestUsageSpill();
    spill.failAppends = true;
    const { clock, sink, queue, enqueueRange } = setup({ spill, maxQueued: 20 });
    sink.mode = 'fail';
    enqueueRange(0, 40);
    await clock.settle();
    expect(queue.stats()).toMatchObject({ queued: 20, spilled: 0, dropped: 20 });
    expect(queue.stats().lastError?.message).toBe('disk full');
  });

  it('replays what an earlier process left in the spill at start', async () => {
    const spill = createTestUsageSpill([[testUsageEvent(0), testUsageEvent(1)], [testUsageEvent(2)]]);
    const { clock, sink, queue } = setup({ spill });
    await clock.advance(0);
    expectExactlyOnce(sink, 3);
    expect(queue.stats().replayed).toBe(3);
    expect(spill.chunks).toEqual([]);
  });

  it('keeps the spill when replay fails, and replays it after backoff', async () => {
    const spill = createTestUsageSpill([[testUsageEvent(0), testUsageEvent(1)]]);
    const { clock, sink, queue } = setup({ spill });
    sink.mode = 'fail';
    await clock.advance(0);
    expect(queue.stats().failedWrites).toBe(1);
    expect(spill.chunks.length).toBe(1);
    sink.mode = 'accept';
    await clock.advance(100);
    expectExactlyOnce(sink, 2);
    expect(spill.chunks).toEqual([]);
  });
});

describe('createUsageQueue flush', () => {
  it('writes everything queued, partial batch included, without waiting for the batch timer', async () => {
    const { sink, queue, enqueueRange } = setup({ maxDelayMs: 60_000 });
    enqueueRange(0, 1234);
    const result = await queue.flush({ timeoutMs: 1000 });
    expect(result).toEqual({ written: 1234, spilled: 0, dropped: 0, drained: true });
    expectExactlyOnce(sink, 1234);
    expect(queue.stats().queued).toBe(0);
  });

  it('resolves at once when there is nothing to write', async () => {
    const { queue } = setup();
    expect(await queue.flush()).toEqual({ written: 0, spilled: 0, dropped: 0, drained: true });
  });

  it('retries at once rather than waiting out the backoff', async () => {
    const { clock, sink, queue, enqueueRange } = setup({ retryBackoff: { baseMs: 60_000, capMs: 60_000, jitter: 0 } });
    sink.mode = 'fail';
    enqueueRange(0, 10);
    await clock.settle();
    sink.mode = 'accept';
    expect(await queue.flush({ timeoutMs: 10 })).toMatchObject({ written: 10, drained: true });
  });

  it('spills what the sink cannot take before the timeout, and a new process writes it', async () => {
    const spill = createTestUsageSpill();
    const { clock, sink, queue, enqueueRange } = setup({ spill });
    sink.mode = 'fail';
    enqueueRange(0, 57);
    const flushed = queue.flush({ timeoutMs: 2000 });
    await clock.advance(2000);
    expect(await flushed).toEqual({ written: 0, spilled: 57, dropped: 0, drained: false });
    expect(await spill.size()).toBe(57);

    const restarted = setup({ spill });
    await restarted.clock.advance(0);
    expectExactlyOnce(restarted.sink, 57);
    expect(sink.stored.size).toBe(0);
  });

  it('spills a copy of a hung in-flight batch, so nothing is lost whichever way it ends', async () => {
    const spill = createTestUsageSpill();
    const { clock, sink, queue, enqueueRange } = setup({ spill, writeTimeoutMs: 60_000 });
    sink.mode = 'hang';
    enqueueRange(0, 15);
    const flushed = queue.flush({ timeoutMs: 1000 });
    await clock.advance(1000);
    expect(await flushed).toMatchObject({ spilled: 15, drained: false });
    sink.releaseHung('fail');
    const restarted = setup({ spill });
    await restarted.clock.advance(0);
    expectExactlyOnce(restarted.sink, 15);
  });

  it('drops and counts what it cannot write in time when there is no spill', async () => {
    const { clock, sink, queue, enqueueRange } = setup();
    sink.mode = 'fail';
    enqueueRange(0, 25);
    const flushed = queue.flush({ timeoutMs: 500 });
    await clock.advance(500);
    expect(await flushed).toEqual({ written: 0, spilled: 0, dropped: 25, drained: false });
    expect(queue.stats().dropped).toBe(25);
  });
});

// 100,000 events each: pure CPU, seconds on a machine the rest of the suite keeps busy (more than the default 5 s under two CPU hogs).
describe('createUsageQueue under stress', { timeout: 60_000 }, () => {
  it('delivers every event exactly once through failures, hangs, spills and a shutdown', async () => {
    const spill = createTestUsageSpill();
    const { clock, sink, queue, enqueueRange } = setup({
      spill,
      maxBatchSize: 50,
      maxQueued: 400,
      writeTimeoutMs: 2000,
      random: () => 0.5,
      retryBackoff: { baseMs: 50, capMs: 800, jitter: 0.5 },
    });
    const modes = ['accept', 'fail', 'accept', 'hang', 'accept', 'fail', 'fail', 'accept'] as const;
    const total = 20_000;
    for (let step = 0; step < 200; step++) {
      sink.mode = modes[step % modes.length] ?? 'accept';
      if (step % 9 === 0) sink.releaseHung(step % 2 === 0 ? 'accept' : 'fail');
      enqueueRange(step * 100, step * 100 + 100);
      expect(queue.stats().queued).toBeLessThanOrEqual(400);
      await clock.advance(137);
    }
    sink.mode = 'accept';
    sink.releaseHung('fail');
    const flushed = await queue.flush({ timeoutMs: 5000 });
    expect(flushed.dropped).toBe(0);
    // Whatever the flush spilled is replayed by the next process into the same ledger.
    const restarted = setup({ spill, maxBatchSize: 50 });
    await restarted.clock.advance(0);
    for (const [requestId, event] of restarted.sink.stored) {
      sink.stored.set(requestId, event);
    }
    const stats = queue.stats();
    expect(stats.dropped).toBe(0);
    expect(stats.failedWrites).toBeGreaterThan(0);
    expect(stats.spilled).toBeGreaterThan(0);
    expectExactlyOnce(sink, total);
    expect(await spill.size()).toBe(0);
  });

  it('stays within its memory bound through a burst of 100,000 events arriving over many ticks', async () => {
    const spill = createTestUsageSpill();
    const { clock, sink, queue, enqueueRange } = setup({ spill, maxBatchSize: 500, maxQueued: 5000 });
    sink.mode = 'fail';
    let highest = 0;
    for (let from = 0; from < 100_000; from += 1000) {
      enqueueRange(from, from + 1000);
      const { queued, spilling } = queue.stats();
      highest = Math.max(highest, queued + spilling);
      await clock.settle();
    }
    expect(highest).toBeLessThanOrEqual(5000 + 5000);
    expect(queue.stats()).toMatchObject({ queued: 5000, dropped: 0, spilled: 95_000 });
    sink.mode = 'accept';
    await clock.advance(60_000);
    expectExactlyOnce(sink, 100_000);
    expect(sink.redelivered).toBe(0);
    expect(queue.stats()).toMatchObject({ queued: 0, written: 100_000, replayed: 95_000 });
  });

  it('bounds memory even for 100,000 events enqueued in one synchronous burst, counting what it drops', async () => {
    const spill = createTestUsageSpill();
    const { clock, sink, queue, enqueueRange } = setup({ spill, maxBatchSize: 500, maxQueued: 5000 });
    sink.mode = 'fail';
    enqueueRange(0, 100_000);
    const during = queue.stats();
    expect(during.queued).toBeLessThanOrEqual(5000);
    expect(during.spilling).toBeLessThanOrEqual(5000);
    await clock.settle();
    const after = queue.stats();
    expect(after.queued + after.spilled + after.dropped).toBe(100_000);
    expect(after.dropped).toBe(90_000);
    sink.mode = 'accept';
    await clock.advance(60_000);
    expect(sink.stored.size).toBe(10_000);
  });
});
