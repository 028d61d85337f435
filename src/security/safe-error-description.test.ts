import { describe, expect, it } from 'vitest';
import { describeErrorSafely } from './safe-error-description.ts';

describe('describeErrorSafely', () => {
  it("describes a wrapped query error by its driver's cause, never by the statement's parameters", () => {
    const driver = new Error('connect ECONNREFUSED 127.0.0.1:5432');
    const wrapped = new Error(
      'Failed query: select * from "virtual_keys" where "key_hash" = $1\nparams: 9f86d081secret',
      {
        cause: driver,
      },
    );
    expect(describeErrorSafely(wrapped)).toBe('Error: connect ECONNREFUSED 127.0.0.1:5432');
  });

  it('keeps only the first line of an error without a cause, cut to 300 characters', () => {
    expect(describeErrorSafely(new Error('Failed query: insert\nparams: customer-secret'))).toBe(
      'Error: Failed query: insert',
    );
    expect(describeErrorSafely(new TypeError('x'.repeat(1_000))).length).toBeLessThanOrEqual(302);
    expect(describeErrorSafely('plain')).toBe('plain');
    expect(describeErrorSafely({ some: 'object' })).toBe('object');
  });
});
