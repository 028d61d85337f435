import { describe, expect, it } from 'vitest';
import { createThrottledErrorLog } from './error-log-throttle.ts';

describe('createThrottledErrorLog', () => {
  it('writes one line per code and interval, and says how many were held back', () => {
    const lines: unknown[] = [];
    const logger = {
      info: () => {},
      warn: (message: string, fields?: Record<string, unknown>) => lines.push(['warn', message, fields]),
      error: (message: string, fields?: Record<string, unknown>) => lines.push(['error', message, fields]),
    };
    let clock = 0;
    const log = createThrottledErrorLog(logger, () => clock, 1_000);
    for (let index = 0; index < 5_000; index++) log('warn', 'key_lookup_busy', 'busy', { requestId: `r${index}` });
    log('error', 'internal_error', 'boom', {});
    clock = 1_000;
    log('warn', 'key_lookup_busy', 'busy', { requestId: 'late' });
    expect(lines).toEqual([
      ['warn', 'busy', { requestId: 'r0', code: 'key_lookup_busy' }],
      ['error', 'boom', { code: 'internal_error' }],
      ['warn', 'busy', { requestId: 'late', code: 'key_lookup_busy', suppressed: 4_999 }],
    ]);
  });
});
