import { describe, expect, it } from 'vitest';
import type { LogLineLevel } from './log-level.ts';
import { createJsonLogger, isoTime, jsonLogLine } from './json-logger.ts';

const fixedTime = Date.UTC(2025, 0, 2, 3, 4, 5, 678);

function recordingLogger(level?: 'debug' | 'info' | 'warn' | 'error' | 'silent') {
  const lines: { line: string; level: LogLineLevel }[] = [];
  const logger = createJsonLogger({
    ...(level === undefined ? {} : { level }),
    write: (line, lineLevel) => lines.push({ line, level: lineLevel }),
    clock: () => fixedTime,
  });
  return { logger, lines };
}

describe('isoTime', () => {
  it('is what Date#toISOString writes, across milliseconds, seconds, days, years and odd times', () => {
    const times: number[] = [];
    for (let time = Date.UTC(2025, 11, 31, 23, 59, 58, 990); time < Date.UTC(2026, 0, 1, 0, 0, 1, 10); time += 7)
      times.push(time, time, time + 1);
    times.push(0, -1, -999, -1000, -1001, 1.5, 999.999, Date.UTC(10_000, 0, 1), Date.UTC(-1, 5, 1), 8.64e15, -8.64e15);
    for (let index = 0; index < 1000; index++) times.push(Math.floor(Math.random() * 4e12));
    for (const time of times) expect(isoTime(time)).toBe(new Date(time).toISOString());
  });
});

describe('the JSON logger', () => {
  it('writes time, level and message first, then the fields', () => {
    const { logger, lines } = recordingLogger();
    logger.warn('usage ledger writes are failing', { failures: 3 });
    expect(lines).toEqual([
      {
        line: '{"time":"2025-01-02T03:04:05.678Z","level":"warn","message":"usage ledger writes are failing","failures":3}',
        level: 'warn',
      },
    ]);
  });

  it('drops lines below its level (info by default)', () => {
    const { logger, lines } = recordingLogger();
    logger.debug('detail');
    logger.info('kept');
    expect(lines.map((entry) => entry.level)).toEqual(['info']);
    const quiet = recordingLogger('error');
    quiet.logger.warn('dropped');
    quiet.logger.error('kept');
    expect(quiet.lines.map((entry) => entry.level)).toEqual(['error']);
    const silent = recordingLogger('silent');
    silent.logger.error('dropped');
    expect(silent.lines).toEqual([]);
  });

  it('never lets fields replace time, level or message', () => {
    const line = JSON.parse(jsonLogLine(fixedTime, 'info', 'real', { level: 'error', message: 'fake', time: 0 })) as {
      level: string;
      message: string;
      time: string;
    };
    expect(line).toEqual({ time: '2025-01-02T03:04:05.678Z', level: 'info', message: 'real' });
  });

  it('keeps the line when a field cannot be written as JSON', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const line = JSON.parse(jsonLogLine(fixedTime, 'error', 'odd fields', { cyclic, big: 1n })) as {
      message: string;
      fields: string;
    };
    expect(line.message).toBe('odd fields');
    expect(typeof line.fields).toBe('string');
  });
});
