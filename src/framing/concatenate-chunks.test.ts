import { describe, expect, it } from 'vitest';
import { concatenateChunks } from './concatenate-chunks.ts';

describe('concatenateChunks', () => {
  it('joins chunks in order, and hands back a single chunk as it is', () => {
    expect(concatenateChunks([Uint8Array.of(1, 2), new Uint8Array(0), Uint8Array.of(3)])).toEqual(
      Uint8Array.of(1, 2, 3),
    );
    const only = Uint8Array.of(7);
    expect(concatenateChunks([only])).toBe(only);
    expect(concatenateChunks([])).toEqual(new Uint8Array(0));
  });
});
