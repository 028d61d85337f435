import { describe, expect, it } from 'vitest';
import { advanceJsonValueScan, createJsonValueScan } from './json-value-scan.ts';

function scanned(...fragments: string[]) {
  const scan = createJsonValueScan();
  for (const fragment of fragments) advanceJsonValueScan(scan, fragment);
  return scan.state;
}

describe('the JSON value scan', () => {
  it('completes when the opening object or array closes, however the text is cut', () => {
    const text = '  {"a": [1, {"b": "}]"}], "c": "\\"{"}';
    for (let cut = 0; cut <= text.length; cut++) expect(scanned(text.slice(0, cut), text.slice(cut))).toBe('complete');
    expect(scanned('[1, [2]]')).toBe('complete');
  });

  it('stays inside while the value is open, and is invalid when it does not start as an object or array', () => {
    expect(scanned('{"a": "}')).toBe('inside');
    expect(scanned('{"a": {}')).toBe('inside');
    expect(scanned('')).toBe('before');
    expect(scanned('"text"')).toBe('invalid');
    expect(scanned('42')).toBe('invalid');
  });
});
