import { EventEmitter } from 'node:events';
import type { Worker } from 'node:cluster';
import { describe, expect, it } from 'vitest';
import { createWorkerWatch, heartbeatIntervalMs, type WorkerMissKind } from './cluster-worker-watch.ts';

function fakeWorker(id: number): Worker & EventEmitter {
  return Object.assign(new EventEmitter(), { id }) as unknown as Worker & EventEmitter;
}

function setUp() {
  let clock = 0;
  const misses: { id: number; kind: WorkerMissKind; silentMs: number }[] = [];
  const watch = createWorkerWatch({
    heartbeatTimeoutMs: 1_000,
    startTimeoutMs: 5_000,
    now: () => clock,
    onMiss: (worker, kind, silentMs) => misses.push({ id: worker.id, kind, silentMs }),
  });
  /** Advances the clock in small steps, checking each time as the timer would. */
  const advance = (ms: number, during?: () => void) => {
    for (let step = 0; step < ms; step += 100) {
      clock += 100;
      during?.();
      watch.check();
    }
  };
  return { watch, misses, advance };
}

describe('createWorkerWatch', () => {
  it('reports a listening worker whose heartbeats stop, once', () => {
    const { watch, misses, advance } = setUp();
    const worker = fakeWorker(1);
    watch.watch(worker);
    worker.emit('listening');
    advance(3_000, () => worker.emit('message', { type: 'torii:heartbeat' }));
    expect(misses).toEqual([]);
    advance(3_000);
    expect(misses).toEqual([{ id: 1, kind: 'heartbeat', silentMs: 1_100 }]);
    watch.stop();
  });

  it('gives a starting worker the start bound, not the heartbeat bound', () => {
    const { watch, misses, advance } = setUp();
    const worker = fakeWorker(2);
    watch.watch(worker);
    advance(4_000);
    expect(misses).toEqual([]);
    advance(2_000);
    expect(misses).toEqual([{ id: 2, kind: 'start', silentMs: 5_100 }]);
    watch.stop();
  });

  it('blames nobody when its own loop was held up', () => {
    const { watch, misses } = setUp();
    const worker = fakeWorker(3);
    let clock = 0;
    const held = createWorkerWatch({
      heartbeatTimeoutMs: 1_000,
      startTimeoutMs: 5_000,
      now: () => clock,
      onMiss: (missed, kind, silentMs) => misses.push({ id: missed.id, kind, silentMs }),
    });
    held.watch(worker);
    worker.emit('listening');
    clock += 3_000; // the primary stood still for 3 s: the heartbeats are queued behind it
    held.check();
    expect(misses).toEqual([]);
    held.stop();
    watch.stop();
  });

  it('sends heartbeats five times per bound, at most once a second', () => {
    expect(heartbeatIntervalMs(10_000)).toBe(1_000);
    expect(heartbeatIntervalMs(2_000)).toBe(400);
    expect(heartbeatIntervalMs(100)).toBe(50);
  });
});
