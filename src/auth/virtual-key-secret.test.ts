import { describe, expect, it } from 'vitest';
import {
  generateVirtualKeyId,
  generateVirtualKeySecret,
  isWellFormedVirtualKeySecret,
  toHex,
} from './virtual-key-secret.ts';

describe('virtual key secrets', () => {
  it('are well formed, unique, and keep a short visible prefix', () => {
    const secrets = new Set<string>();
    for (let index = 0; index < 2000; index++) {
      const { secret, prefix } = generateVirtualKeySecret();
      expect(secret).toMatch(/^sk-torii-[A-Za-z0-9]{43}$/);
      expect(isWellFormedVirtualKeySecret(secret)).toBe(true);
      expect(secret.startsWith(prefix)).toBe(true);
      expect(prefix).toHaveLength('sk-torii-'.length + 6);
      secrets.add(secret);
    }
    expect(secrets.size).toBe(2000);
  });

  it('refuse any single-character change through the checksum', () => {
    const { secret } = generateVirtualKeySecret();
    let refused = 0;
    for (let position = 'sk-torii-'.length; position < secret.length; position++) {
      const replacement = secret[position] === 'a' ? 'b' : 'a';
      const mistyped = secret.slice(0, position) + replacement + secret.slice(position + 1);
      if (!isWellFormedVirtualKeySecret(mistyped)) refused++;
    }
    expect(refused).toBe(secret.length - 'sk-torii-'.length);
    expect(isWellFormedVirtualKeySecret(secret.slice(0, -1))).toBe(false);
    expect(isWellFormedVirtualKeySecret(`${secret}a`)).toBe(false);
    expect(isWellFormedVirtualKeySecret(secret.replace('sk-torii-', 'sk-tori1-'))).toBe(false);
  });

  it('ids are key_ and 20 base62 characters; hex is lowercase and two digits a byte', () => {
    expect(generateVirtualKeyId()).toMatch(/^key_[A-Za-z0-9]{20}$/);
    expect(toHex(new Uint8Array([0, 1, 171, 255]))).toBe('0001abff');
  });
});
