import { describe, expect, it } from 'vitest';
import { verbatimTextCheck } from './verbatim-native-text.ts';

const sendsAsParsed = (text: string, keys: readonly string[]): boolean => verbatimTextCheck(keys)(text);

describe('verbatimTextCheck', () => {
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

  it('tells apart keys that share a prefix, and counts each on its own', () => {
    const keys = ['model', 'stream', 'stream_options', 'include_usage'];
    const check = verbatimTextCheck(keys);
    expect(check('{"model":"m","stream":true,"stream_options":{"include_usage":true}}')).toBe(true);
    expect(check('{"model":"m","stream":true,"stream_options":{"include_usage":true},"stream":false}')).toBe(false);
    expect(check('{"model":"m","stream_options":{},"stream_options":{"include_usage":true}}')).toBe(false);
    expect(check('{"model":"m","stream_options":{"include_usage":true,"include_usage":false}}')).toBe(false);
    expect(check('{"model":"m","streamed":1,"stream_optionsx":2,"xmodel":3,"messages":[]}')).toBe(true);
  });

  it('gives the same answer on a second call (the scan keeps no state between texts)', () => {
    const check = verbatimTextCheck(['model']);
    expect(check('{"model":"a","model":"b"}')).toBe(false);
    expect(check('{"model":"a"}')).toBe(true);
    expect(check('{"model":"a"}')).toBe(true);
  });

  it('matches keys literally, whatever characters they hold', () => {
    const check = verbatimTextCheck(['a.b', 'c|d']);
    expect(check('{"a.b":1,"axb":2,"c":3,"d":4}')).toBe(true);
    expect(check('{"a.b":1,"a.b":2}')).toBe(false);
    expect(check('{"c|d":1,"c|d":2}')).toBe(false);
  });
});
