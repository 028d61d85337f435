import { describe, expect, it } from 'vitest';
import { sendsAsParsed } from './verbatim-native-text.ts';

describe('sendsAsParsed', () => {
  it('takes a text whose keys occur once', () => {
    expect(sendsAsParsed('{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}', ['model', 'stream'])).toBe(
      true,
    );
  });

  it('refuses a duplicate key, which a first-wins parser would read differently', () => {
    expect(sendsAsParsed('{"model":"denied","messages":[],"model":"allowed"}', ['model'])).toBe(false);
  });

  it('refuses a key spelled with an escaped ASCII letter', () => {
    expect(sendsAsParsed('{"\\u006dodel":"denied","model":"allowed"}', ['model'])).toBe(false);
    expect(sendsAsParsed('{"mode\\u006C":"denied","model":"allowed"}', ['model'])).toBe(false);
  });

  it('counts a key that also appears as a string value, and leaves escaped quotes in content alone', () => {
    expect(sendsAsParsed('{"model":"m","messages":[{"role":"model"}]}', ['model'])).toBe(false);
    expect(sendsAsParsed('{"model":"m","messages":[{"content":"the \\"model\\" field"}]}', ['model'])).toBe(true);
  });

  it('keeps non-ASCII escapes, which no key of interest can hold', () => {
    expect(sendsAsParsed('{"model":"m","messages":[{"content":"caf\\u00e9 \\u4e2d"}]}', ['model'])).toBe(true);
  });
});
