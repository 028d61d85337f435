import { describe, expect, it } from 'vitest';
import { logLevelEnabled, parseLogLevel } from './log-level.ts';

describe('log levels', () => {
  it('default to info when unset or empty', () => {
    expect(parseLogLevel(undefined)).toEqual({ level: 'info' });
    expect(parseLogLevel(' ')).toEqual({ level: 'info' });
  });

  it('accept every level in any case', () => {
    for (const level of ['debug', 'info', 'warn', 'error', 'silent']) {
      expect(parseLogLevel(level)).toEqual({ level });
      expect(parseLogLevel(` ${level.toUpperCase()} `)).toEqual({ level });
    }
  });

  it('name the accepted values for anything else', () => {
    expect(parseLogLevel('verbose')).toEqual({
      problem: 'must be one of debug, info, warn, error, silent, got "verbose"',
    });
  });

  it('write a line at the threshold and above, none when silent', () => {
    expect(logLevelEnabled('info', 'debug')).toBe(false);
    expect(logLevelEnabled('info', 'info')).toBe(true);
    expect(logLevelEnabled('warn', 'info')).toBe(false);
    expect(logLevelEnabled('warn', 'error')).toBe(true);
    expect(logLevelEnabled('silent', 'error')).toBe(false);
  });
});
