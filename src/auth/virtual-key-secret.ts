/** Every virtual key secret starts with this. */
export const virtualKeySecretPrefix = 'sk-torii-';

/** How many characters of the secret (after `sk-torii-`) are kept visible in the key's `prefix`. */
const visibleCharacters = 6;

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A new secret and the visible prefix stored beside its hash. */
export interface GeneratedSecret {
  secret: string;
  prefix: string;
}

/** Random characters in a secret, then {@link checksumLength} characters of checksum. */
const randomLength = 37;
const checksumLength = 6;

const crcTable = Array.from({ length: 256 }, (_, index) => {
  let value = index;
  for (let bit = 0; bit < 8; bit++) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
  return value >>> 0;
});

/** CRC-32 of an ASCII string, as 6 base62 characters. */
function checksumOf(text: string): string {
  let crc = 0xffffffff;
  for (let index = 0; index < text.length; index++)
    crc = crcTable[(crc ^ text.charCodeAt(index)) & 0xff]! ^ (crc >>> 8);
  let value = (crc ^ 0xffffffff) >>> 0;
  let encoded = '';
  for (let index = 0; index < checksumLength; index++) {
    encoded = alphabet[value % 62]! + encoded;
    value = Math.floor(value / 62);
  }
  return encoded;
}

/**
 * Generates a virtual key secret: `sk-torii-`, 37 base62 characters from Web Crypto (about 220 bits of entropy)
 * and a 6-character CRC-32 checksum of them, with its visible prefix (`sk-torii-AbC123`). The checksum lets the
 * gateway refuse mistyped and made-up keys without looking them up anywhere (as GitHub's token format does).
 *
 * @example
 * const { secret, prefix } = generateVirtualKeySecret();
 */
export function generateVirtualKeySecret(): GeneratedSecret {
  const characters: string[] = [];
  // Rejection sampling keeps every character equally likely (256 is not a multiple of 62).
  while (characters.length < randomLength) {
    for (const byte of crypto.getRandomValues(new Uint8Array(64))) {
      if (byte < 248 && characters.length < randomLength) characters.push(alphabet[byte % 62]!);
    }
  }
  const random = characters.join('');
  const secret = virtualKeySecretPrefix + random + checksumOf(random);
  return { secret, prefix: secret.slice(0, virtualKeySecretPrefix.length + visibleCharacters) };
}

const secretPattern = new RegExp(`^${virtualKeySecretPrefix}[A-Za-z0-9]{${randomLength + checksumLength}}$`);

/** Whether a presented secret has the shape and checksum of a virtual key (no lookup needed to refuse it if not). */
export function isWellFormedVirtualKeySecret(secret: string): boolean {
  if (!secretPattern.test(secret)) return false;
  const body = secret.slice(virtualKeySecretPrefix.length);
  return checksumOf(body.slice(0, randomLength)) === body.slice(randomLength);
}

/** A new key id, `key_` and 20 base62 characters. */
export function generateVirtualKeyId(): string {
  let id = 'key_';
  while (id.length < 24) {
    for (const byte of crypto.getRandomValues(new Uint8Array(32))) {
      if (byte < 248 && id.length < 24) id += alphabet[byte % 62];
    }
  }
  return id;
}

const hexDigits = Array.from({ length: 256 }, (_, value) => value.toString(16).padStart(2, '0'));

/** Lowercase hex of a digest. */
export function toHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += hexDigits[byte];
  return hex;
}
