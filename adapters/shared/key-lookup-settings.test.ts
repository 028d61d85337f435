import { describe, expect, it } from 'vitest';
import { readKeyLookupLimits } from './key-lookup-settings.ts';

describe('readKeyLookupLimits', () => {
  it('keeps the defaults when unset or empty', () => {
    expect(readKeyLookupLimits({})).toEqual({});
    expect(readKeyLookupLimits({ TORII_KEY_LOOKUP_CONCURRENCY: '', TORII_KEY_LOOKUP_QUEUE_MAX: '' })).toEqual({});
  });

  it('reads positive integers', () => {
    expect(readKeyLookupLimits({ TORII_KEY_LOOKUP_CONCURRENCY: '2', TORII_KEY_LOOKUP_QUEUE_MAX: '50000' })).toEqual({
      maxConcurrent: 2,
      maxQueued: 50_000,
    });
  });

  it.each(['0', '-1', '1.5', 'four', '1e'])('refuses %s, naming the variable', (value) => {
    expect(() => readKeyLookupLimits({ TORII_KEY_LOOKUP_CONCURRENCY: value })).toThrow(
      `TORII_KEY_LOOKUP_CONCURRENCY: must be a positive integer, got "${value}"`,
    );
    expect(() => readKeyLookupLimits({ TORII_KEY_LOOKUP_QUEUE_MAX: value })).toThrow('TORII_KEY_LOOKUP_QUEUE_MAX');
  });
});
