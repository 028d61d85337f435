import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  capYoungGeneration,
  defaultSemiSpaceMegabytes,
  scavengeOnOneThread,
  scavengesOnOneThread,
  semiSpaceCap,
} from './young-generation.ts';

/**
 * A child process that keeps ~10,000 objects alive while it allocates (what makes V8 grow its young generation),
 * yielding to the event loop between slices as a server does, and prints the largest young generation it had after a
 * collection, in MB. (Between collections V8 may run a few pages past its capacity and give them back at the next.)
 */
const allocator = (cap: number | undefined): string => `
  import { PerformanceObserver } from 'node:perf_hooks';
  import { getHeapSpaceStatistics } from 'node:v8';
  ${cap === undefined ? '' : callingModule(`capYoungGeneration(${cap})`)}
  const newSpace = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;
  let largest = 0;
  new PerformanceObserver(() => { largest = Math.max(largest, newSpace()); }).observe({ entryTypes: ['gc'] });
  ${allocationLoop(1500, 2000, 10_000)}
  process.stdout.write(String(largest / 1024 / 1024));
`;

/** Child source that imports this module and makes one call of it (`capYoungGeneration(2)`). */
function callingModule(call: string): string {
  const name = call.slice(0, call.indexOf('('));
  return `const { ${name} } = await import(${JSON.stringify(new URL('./young-generation.ts', import.meta.url).href)}); ${call};`;
}

/**
 * Child source that allocates `slices` x `perSlice` small objects, keeping the last `keep` to `2 x keep` of them alive,
 * and yields to the event loop between slices as a server does.
 */
function allocationLoop(slices: number, perSlice: number, keep: number): string {
  return `
    const kept = [];
    for (let slice = 0; slice < ${slices}; slice++) {
      for (let index = 0; index < ${perSlice}; index++) {
        kept.push({ index, label: 'item ' + index });
        if (kept.length > ${2 * keep}) kept.splice(0, ${keep});
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  `;
}

const largestYoungGeneration = (cap: number | undefined): number =>
  Number(execFileSync(process.execPath, ['--input-type=module', '-e', allocator(cap)], { encoding: 'utf8' }));

describe('semiSpaceCap', () => {
  it('caps at 4 MB by default; TORII_SEMI_SPACE_MB=0 leaves V8 its own sizing', () => {
    expect(semiSpaceCap({}, [])).toBe(defaultSemiSpaceMegabytes);
    expect(semiSpaceCap({ TORII_SEMI_SPACE_MB: ' 16 ' }, [])).toBe(16);
    expect(semiSpaceCap({ TORII_SEMI_SPACE_MB: '0' }, [])).toBeUndefined();
  });

  it("leaves V8's young-generation flags to an operator who set one", () => {
    expect(semiSpaceCap({ TORII_SEMI_SPACE_MB: '8' }, ['--max-semi-space-size=64'])).toBeUndefined();
    expect(semiSpaceCap({}, ['--semi-space-growth-factor', '4'])).toBeUndefined();
    expect(semiSpaceCap({ NODE_OPTIONS: '--max-old-space-size=512 --min-semi-space-size=16' }, [])).toBeUndefined();
    expect(semiSpaceCap({ NODE_OPTIONS: '--max-semi-space-sizes' }, [])).toBe(defaultSemiSpaceMegabytes);
  });

  it('refuses anything but a whole number of MB up to 64, naming the setting', () => {
    for (const value of ['-1', '2.5', 'four', '65', '4MB']) {
      expect(() => semiSpaceCap({ TORII_SEMI_SPACE_MB: value }, [])).toThrow(
        expect.objectContaining({ setting: 'TORII_SEMI_SPACE_MB' }),
      );
    }
  });
});

describe('capYoungGeneration', () => {
  it('lets V8 grow the young generation up to the cap and no further', () => {
    // Both semi-spaces count: a 2 MB cap is a 4 MB young generation. Without the cap the same load grows it past that.
    expect(largestYoungGeneration(undefined)).toBeGreaterThan(8);
    expect(largestYoungGeneration(2)).toBe(4);
  }, 60_000);

  it('stops V8 growing it once at the cap, and lets it grow again below it, after each collection', async () => {
    let size = 1024 * 1024;
    const factors: number[] = [];
    const stop = capYoungGeneration(1, {
      newSpaceBytes: () => size,
      setGrowthFactor: (factor) => factors.push(factor),
    });
    expect(factors).toEqual([2]);
    size = 2 * 1024 * 1024;
    expect(await collectGarbageUntil(() => factors.length === 2)).toBe(true);
    expect(factors).toEqual([2, 1]);
    size = 1024 * 1024;
    expect(await collectGarbageUntil(() => factors.length === 3)).toBe(true);
    expect(factors).toEqual([2, 1, 2]);
    stop();
    size = 4 * 1024 * 1024;
    await collectGarbageUntil(() => false, 50);
    expect(factors).toEqual([2, 1, 2]);
  });
});

/**
 * Allocates garbage (so V8 collects) and yields (so the collection is reported) until `done`, at most `rounds` times;
 * resolves to whether `done` held.
 */
async function collectGarbageUntil(done: () => boolean, rounds = 10_000): Promise<boolean> {
  let garbage: unknown[] = [];
  for (let round = 0; round < rounds && !done(); round++) {
    for (let index = 0; index < 10_000; index++) garbage.push({ index });
    garbage = [];
    await new Promise((resolve) => setImmediate(resolve));
  }
  return done();
}

/**
 * A child process under `--trace-gc-nvp` that keeps ~100,000 objects alive while it allocates (survivors enough for V8
 * to hand a scavenge to its helper threads), after `scavengeOnOneThread()` when `oneThread`; returns, per scavenge, the
 * milliseconds its helper threads worked (`background.scavenge.parallel`).
 */
const scavengeHelperMilliseconds = (oneThread: boolean): number[] => {
  const script = `${oneThread ? callingModule('scavengeOnOneThread()') : ''}\n${allocationLoop(300, 5000, 100_000)}`;
  const trace = execFileSync(process.execPath, ['--trace-gc-nvp', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return [...trace.matchAll(/gc=s .*?background\.scavenge\.parallel=([\d.]+)/g)].map((match) => Number(match[1]));
};

describe('scavengesOnOneThread', () => {
  it('is on when each server process has a CPU or less, off when it has more', () => {
    expect(scavengesOnOneThread({}, [], 1, 1)).toBe(true);
    expect(scavengesOnOneThread({}, [], 4, 4)).toBe(true);
    expect(scavengesOnOneThread({}, [], 2, 8)).toBe(true);
    expect(scavengesOnOneThread({}, [], 4, 1)).toBe(false);
    expect(scavengesOnOneThread({}, [], 4, 2)).toBe(false);
  });

  it("leaves V8's scavenge-thread flags to an operator who set one", () => {
    expect(scavengesOnOneThread({}, ['--parallel-scavenge'], 1, 1)).toBe(false);
    expect(scavengesOnOneThread({}, ['--no-parallel-scavenge'], 1, 1)).toBe(false);
    expect(scavengesOnOneThread({ NODE_OPTIONS: '--max-old-space-size=512 --single-threaded-gc' }, [], 1, 1)).toBe(
      false,
    );
    expect(scavengesOnOneThread({ NODE_OPTIONS: '--parallel-scavenges' }, [], 1, 1)).toBe(true);
  });
});

describe('scavengeOnOneThread', () => {
  it("sets V8's --no-parallel-scavenge", () => {
    const set: string[] = [];
    scavengeOnOneThread((flags) => set.push(flags));
    expect(set).toEqual(['--no-parallel-scavenge']);
  });

  it("takes V8's helper threads out of scavenges from then on", () => {
    // Without it V8 shares these scavenges with its helpers; with it, none of them gets helper time.
    const shared = scavengeHelperMilliseconds(false);
    expect(shared.length).toBeGreaterThan(3);
    expect(shared.some((milliseconds) => milliseconds > 0)).toBe(true);
    const alone = scavengeHelperMilliseconds(true);
    expect(alone.length).toBeGreaterThan(3);
    expect(alone.every((milliseconds) => milliseconds === 0)).toBe(true);
  }, 60_000);
});
