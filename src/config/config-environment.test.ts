import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import { substituteEnvironmentReferences } from './config-environment.ts';

describe('substituteEnvironmentReferences', () => {
  it('replaces every reference in a string, keeping the text around them', () => {
    expect(substituteEnvironmentReferences('${A}-${B}/${A}', { A: 'x', B: 'y' })).toBe('x-y/x');
  });

  it('walks arrays and objects without changing numbers, booleans or null', () => {
    expect(
      substituteEnvironmentReferences({ list: ['${A}', 1, true, null], nested: { value: '${A:-no}' } }, { A: 'a' }),
    ).toEqual({ list: ['a', 1, true, null], nested: { value: 'a' } });
  });

  it('takes a default, which may be empty or contain spaces and colons', () => {
    expect(substituteEnvironmentReferences(['${A:-}', '${B:-http://localhost:8000 v1}'], {})).toEqual([
      '',
      'http://localhost:8000 v1',
    ]);
  });

  it('names array positions with brackets and reports a missing variable at the root as (root)', () => {
    const thrown = (raw: unknown): readonly string[] => {
      try {
        substituteEnvironmentReferences(raw, {});
      } catch (error) {
        if (error instanceof ConfigError) return error.problems;
        throw error;
      }
      throw new Error('expected a ConfigError');
    };
    expect(thrown('${ROOT}')).toEqual(['(root): environment variable ROOT is not set']);
    expect(thrown({ list: ['ok', { key: '${A}${B}' }] })).toEqual([
      'list[1].key: environment variable A is not set',
      'list[1].key: environment variable B is not set',
    ]);
  });

  it('does not treat names that are not identifiers as references', () => {
    expect(substituteEnvironmentReferences('${1A} ${A-B}', { '1A': 'x' })).toBe('${1A} ${A-B}');
  });
});
