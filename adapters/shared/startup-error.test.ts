import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.ts';
import { describeStartupFailure, fileSystemReason, formatStartupFailure, StartupError } from './startup-error.ts';

describe('formatStartupFailure', () => {
  it('prints a StartupError as one JSON line naming the setting, without a stack', () => {
    const line = formatStartupFailure(
      new StartupError('PORT', 'port 8787 is already in use'),
      new Date(Date.UTC(2026, 10, 27)),
    );
    expect(line).not.toContain('\n');
    expect(JSON.parse(line)).toEqual({
      time: '2026-11-27T00:00:00.000Z',
      level: 'error',
      message: 'cannot start: PORT: port 8787 is already in use',
      setting: 'PORT',
      reason: 'port 8787 is already in use',
    });
  });

  it('prints every problem of a config error, naming the first field as the setting', () => {
    const described = describeStartupFailure(
      new ConfigError([
        'modelGroups.a.deployments[0].apiKey: required',
        'modelGroups.b.deployments[0].model: required',
      ]),
    );
    expect(described.setting).toBe('modelGroups.a.deployments[0].apiKey');
    expect(described.message).toBe(
      'cannot start: invalid config: modelGroups.a.deployments[0].apiKey: required; modelGroups.b.deployments[0].model: required',
    );
    expect(described.stack).toBeUndefined();
  });

  it('keeps the stack of an unexpected error inside the one line', () => {
    const line = formatStartupFailure(new TypeError('x is not a function'));
    expect(line.split('\n')).toHaveLength(1);
    expect(JSON.parse(line)).toMatchObject({ message: 'cannot start: x is not a function', stack: expect.any(String) });
  });

  it('names file-system errors by their code', () => {
    expect(fileSystemReason(Object.assign(new Error('ENOTDIR: not a directory, mkdir'), { code: 'ENOTDIR' }))).toBe(
      'a part of the path is a file, not a directory (ENOTDIR)',
    );
    expect(fileSystemReason(new Error('odd'))).toBe('odd');
  });
});
