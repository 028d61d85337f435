import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../errors.ts';
import { decodeKeyListCursor, encodeKeyListCursor } from './key-list-cursor.ts';

describe('key list cursor', () => {
  it('round-trips positions, ids with any characters included', () => {
    for (const position of [
      { createdAt: 0, id: 'key_1' },
      { createdAt: Date.UTC(2025, 0, 1, 0, 0, 0, 7), id: 'key_with.dots.and ünïcødé ✓' },
      { createdAt: Date.UTC(9999, 11, 31, 23, 59, 59, 999), id: 'k'.repeat(200) },
    ]) {
      const cursor = encodeKeyListCursor(position);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeKeyListCursor(cursor)).toEqual(position);
    }
  });

  it('refuses cursors it did not make with a 400 naming the cursor', () => {
    const invalid = ['', '***', encodeKeyListCursor({ createdAt: 1, id: 'x' }).slice(0, -2) + '!!', btoa('-5.key_1')];
    invalid.push(btoa('abc.key_1').replace(/=+$/, ''), btoa('12').replace(/=+$/, ''), '_w');
    // Well-encoded, but no key could be there: NUL or other control characters in the id (Postgres cannot even
    // compare NUL), an id longer than any, a time past year 9999 (or past what a Date can hold at all).
    for (const position of [
      { createdAt: 1, id: '\u0000' },
      { createdAt: 1, id: 'key\u001b[31m' },
      { createdAt: 1, id: 'k'.repeat(201) },
      { createdAt: Date.UTC(10_000, 0, 1), id: 'key_1' },
      { createdAt: 9e15, id: 'key_1' },
    ])
      invalid.push(encodeKeyListCursor(position));
    for (const cursor of invalid) {
      const error = (() => {
        try {
          decodeKeyListCursor(cursor);
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(isGatewayError(error) && error.status === 400 && error.param === 'cursor', cursor).toBe(true);
    }
  });
});
