import { describe, expect, it } from 'vitest';
import { readLogLevel } from './log-level-setting.ts';
import { describeStartupFailure } from './startup-error.ts';

describe('TORII_LOG_LEVEL', () => {
  it('is info when unset, and any level otherwise', () => {
    expect(readLogLevel({})).toBe('info');
    expect(readLogLevel({ TORII_LOG_LEVEL: 'warn' })).toBe('warn');
    expect(readLogLevel({ TORII_LOG_LEVEL: 'SILENT' })).toBe('silent');
  });

  it('stops the start with one line naming it when invalid', () => {
    let caught: unknown;
    try {
      readLogLevel({ TORII_LOG_LEVEL: 'loud' });
    } catch (error) {
      caught = error;
    }
    expect(describeStartupFailure(caught)).toEqual({
      level: 'error',
      message: 'cannot start: TORII_LOG_LEVEL: must be one of debug, info, warn, error, silent, got "loud"',
      setting: 'TORII_LOG_LEVEL',
      reason: 'must be one of debug, info, warn, error, silent, got "loud"',
    });
  });
});
