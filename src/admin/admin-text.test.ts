import { describe, expect, it } from 'vitest';
import { adminLabel, adminText, isAdminLabel, isAdminText } from './admin-text.ts';

describe('admin text rules', () => {
  it('labels refuse every control character and unpaired surrogates, and keep any other Unicode', () => {
    for (const good of ['ci', 'ключ 🔑 鍵', 'a b.c-d_e', '\u00a0nbsp', 'emoji 😀'])
      expect(isAdminLabel(good), good).toBe(true);
    for (const bad of [
      '\u0000',
      'a\u0001',
      'a\tb',
      'a\nb',
      'a\rb',
      '\u001b[31m',
      '\u007f',
      '\u0085',
      '\u009f',
      '\ud800',
      'x\udc00',
      '😀'.slice(0, 1),
    ])
      expect(isAdminLabel(bad), JSON.stringify(bad)).toBe(false);
  });

  it('text keeps tabs and line breaks but refuses NUL, other control characters and unpaired surrogates', () => {
    for (const good of ['', 'line one\nline two\r\n\tindented', '😀'.repeat(3)]) expect(isAdminText(good)).toBe(true);
    for (const bad of ['\u0000', 'a\u0007', '\u000b', '\u000c', '\u007f', '\u009b', '\udfff'])
      expect(isAdminText(bad), JSON.stringify(bad)).toBe(false);
  });

  it('checks length and content as one schema each', () => {
    expect(adminLabel(3).safeParse('abc').success).toBe(true);
    expect(adminLabel(3).safeParse('').success).toBe(false);
    expect(adminLabel(3).safeParse('abcd').success).toBe(false);
    expect(adminLabel(3).safeParse('a\u0000').success).toBe(false);
    expect(adminText(3).safeParse('').success).toBe(true);
    expect(adminText(3).safeParse('a\nb').success).toBe(true);
    expect(adminText(3).safeParse('a\u0000').success).toBe(false);
  });
});
