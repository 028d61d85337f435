import { describe, expect, it } from 'vitest';
import { formatResetDuration, windowStartOf } from './window-clock.ts';

describe('windowStartOf', () => {
  it('aligns windows to multiples of their length since the epoch', () => {
    expect(windowStartOf(0, 60_000)).toBe(0);
    expect(windowStartOf(59_999, 60_000)).toBe(0);
    expect(windowStartOf(60_000, 60_000)).toBe(60_000);
    expect(windowStartOf(1_700_000_123_456, 60_000)).toBe(1_700_000_100_000);
    expect(windowStartOf(2_500, 2_000)).toBe(2_000);
  });
});

describe('formatResetDuration', () => {
  it.each([
    [0, '0s'],
    [-5, '0s'],
    [17, '17ms'],
    [999.6, '1s'],
    [1_000, '1s'],
    [1_500, '1.5s'],
    [20_000, '20s'],
    [59_999, '59.999s'],
    [60_000, '1m0s'],
    [360_000, '6m0s'],
    [90_250, '1m30.25s'],
    [1_005, '1.005s'],
    [1_050, '1.05s'],
    [1_055, '1.055s'],
    [1_100, '1.1s'],
    [1_110, '1.11s'],
    [1_001, '1.001s'],
    [1_010, '1.01s'],
    [1_999, '1.999s'],
    [3_723_000, '1h2m3s'],
  ])('formats %d ms as %s, as OpenAI (Go) does', (milliseconds, text) => {
    expect(formatResetDuration(milliseconds)).toBe(text);
  });
});
