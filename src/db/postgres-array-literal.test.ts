import { describe, expect, it } from 'vitest';
import { postgresArrayLiteral } from './postgres-array-literal.ts';

describe('postgresArrayLiteral', () => {
  it('quotes strings, escapes quotes and backslashes, and writes NULL for null', () => {
    expect(postgresArrayLiteral(['a', 'NULL', 'say "hi"', 'back\\slash', '{,}', '', null])).toBe(
      '{"a","NULL","say \\"hi\\"","back\\\\slash","{,}","",NULL}',
    );
  });

  it('writes numbers exactly and booleans as t/f', () => {
    expect(postgresArrayLiteral([0, -1, 0.1 + 0.2, 1e21, true, false])).toBe('{0,-1,0.30000000000000004,1e+21,t,f}');
    expect(postgresArrayLiteral([])).toBe('{}');
  });

  it('refuses numbers the database would store as something else', () => {
    for (const value of [Number.NaN, Infinity, -Infinity])
      expect(() => postgresArrayLiteral([value])).toThrow(RangeError);
  });
});
