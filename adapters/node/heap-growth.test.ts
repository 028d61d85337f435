import { describe, expect, it } from 'vitest';
import { heapGrowthFlag } from './heap-growth.ts';

describe('heapGrowthFlag', () => {
  it("leaves V8's own heuristics by default", () => {
    expect(heapGrowthFlag({}, [])).toBeUndefined();
  });

  it('takes TORII_HEAP_GROWING_PERCENT, and 0 leaves V8 its own heuristics', () => {
    expect(heapGrowthFlag({ TORII_HEAP_GROWING_PERCENT: ' 25 ' }, [])).toBe('--heap-growing-percent=25');
    expect(heapGrowthFlag({ TORII_HEAP_GROWING_PERCENT: '0' }, [])).toBeUndefined();
    expect(heapGrowthFlag({ TORII_HEAP_GROWING_PERCENT: '' }, [])).toBeUndefined();
  });

  it('leaves a flag the operator set on the command line or in NODE_OPTIONS alone', () => {
    const chosen = { TORII_HEAP_GROWING_PERCENT: '50' };
    expect(heapGrowthFlag(chosen, ['--heap-growing-percent=200'])).toBeUndefined();
    expect(
      heapGrowthFlag({ ...chosen, NODE_OPTIONS: '--max-old-space-size=512 --heap-growing-percent 80' }, []),
    ).toBeUndefined();
    expect(heapGrowthFlag({ ...chosen, NODE_OPTIONS: '--heap-growing-percentage-typo' }, [])).toBe(
      '--heap-growing-percent=50',
    );
  });

  it('refuses anything but a whole number up to 1000, naming the setting', () => {
    for (const value of ['-5', '1.5', 'fifty', '1001', '1e3']) {
      expect(() => heapGrowthFlag({ TORII_HEAP_GROWING_PERCENT: value }, [])).toThrow(
        expect.objectContaining({ setting: 'TORII_HEAP_GROWING_PERCENT' }),
      );
    }
  });

  it('is a flag this V8 knows (setting an unknown one would be silently ignored)', async () => {
    const { execFileSync } = await import('node:child_process');
    const output = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    expect(output).toContain('--heap-growing-percent');
  });
});
