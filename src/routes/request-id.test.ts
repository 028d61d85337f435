import { describe, expect, it } from 'vitest';
import { timeOrderedRequestId } from './request-id.ts';

const uuidVersion7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The milliseconds a UUIDv7 carries in its first 48 bits. */
const millisecondsOf = (id: string): number => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

describe('timeOrderedRequestId', () => {
  it('is a UUIDv7 (RFC 9562) carrying the time it was given', () => {
    const now = Date.UTC(2026, 10, 27, 17, 45, 12, 345);
    const id = timeOrderedRequestId(now);
    expect(id).toMatch(uuidVersion7);
    expect(millisecondsOf(id)).toBe(now);
    expect(timeOrderedRequestId(Date.UTC(2026, 10, 27)).slice(0, 15)).toBe('01a21a4d-4000-7');
  });

  it('sorts by time across milliseconds, as text and as the ledger key', () => {
    const start = Date.now();
    const ids = Array.from({ length: 2_000 }, (_, index) => timeOrderedRequestId(start + Math.floor(index / 7)));
    // Generated in time order, so sorting the text must keep every id's millisecond where it was.
    const sorted = [...ids].sort();
    expect(sorted.map(millisecondsOf)).toEqual(ids.map(millisecondsOf));
    expect(millisecondsOf(sorted.at(-1)!)).toBe(start + Math.floor(1_999 / 7));
  });

  it('is unique within one millisecond, its 74 random bits varying', () => {
    const now = Date.now();
    const ids = Array.from({ length: 20_000 }, () => timeOrderedRequestId(now));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids.slice(0, 100)) expect(id).toMatch(uuidVersion7);
    // Every random hex digit position takes more than one value.
    for (const position of [15, 16, 17, 20, 21, 22, 24, 35])
      expect(new Set(ids.map((id) => id[position])).size).toBeGreaterThan(8);
  });

  it('clamps clocks outside the 48 bits instead of writing a malformed id', () => {
    for (const clock of [-5, Number.NaN, 2 ** 50, 1.5]) expect(timeOrderedRequestId(clock)).toMatch(uuidVersion7);
    expect(millisecondsOf(timeOrderedRequestId(-5))).toBe(0);
    expect(millisecondsOf(timeOrderedRequestId(2 ** 50))).toBe(2 ** 48 - 1);
    expect(millisecondsOf(timeOrderedRequestId(1.5))).toBe(1);
  });
});
