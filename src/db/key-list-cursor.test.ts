import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../errors.ts';
import { decodeKeyListCursor, encodeKeyListCursor } from './key-list-cursor.ts';

describe('key list cursor', () => {
  it('round-trips positions, ids with any characters included', () => {
    for (const position of [
      { createdAt: 0, id: 'key_1' },
      { createdAt: Date.UTC(2025, 0, 1, 0, 0, 0, 7), id: 'key_with.dots.and ünïcødé ✓' },
    ]) {
      const cursor = encodeKeyListCursor(position);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeKeyListCursor(cursor)).toEqual(position);
    }
  });

  it('refuses cursors it did not make with a 400 naming the cursor', () => {
    const invalid = ['', '***', encodeKeyListCursor({ createdAt: 1, id: 'x' }).slice(0, -2) + '!!', btoa('-5.key_1')];
    invalid.push(btoa('abc.key_1').replace(/=+$/, ''), btoa('12').replace(/=+$/, ''), '_w');
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
