import { invalidRequest } from '../errors.ts';

/** Where a page of keys ends: the last key's creation time (epoch ms) and id, the listing's sort order. */
export interface KeyListPosition {
  createdAt: number;
  id: string;
}

/**
 * Encodes a position as an opaque cursor (base64url of `<createdAt>.<id>`). Opaque so clients pass it back as is and
 * the store may change what it holds.
 */
export function encodeKeyListCursor(position: KeyListPosition): string {
  const bytes = new TextEncoder().encode(`${position.createdAt}.${position.id}`);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** The last millisecond of year 9999: later times have no ISO 8601 form Postgres reads, and no key was made then. */
const latestTime = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/** Key ids are short (`key_` and 20 characters); anything much longer did not come from a key. */
const maxIdLength = 200;
// Ids never hold control characters, and Postgres cannot compare text holding NUL at all.
// eslint-disable-next-line no-control-regex
const controlCharacter = /[\u0000-\u001F\u007F-\u009F]/u;

/**
 * Decodes a cursor from {@link encodeKeyListCursor}; anything else is a 400 naming `cursor`, as is a well-encoded
 * position no key can have (a time past year 9999, an id with control characters or over 200 characters), so no
 * client-made cursor reaches the database as a value it cannot take.
 */
export function decodeKeyListCursor(cursor: string): KeyListPosition {
  const invalid = () => invalidRequest('The cursor is not one this API returned.', 'cursor', 'invalid_cursor');
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let text: string;
  try {
    const binary = atob(cursor.replaceAll('-', '+').replaceAll('_', '/'));
    text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)));
  } catch {
    throw invalid();
  }
  const separator = text.indexOf('.');
  const createdAt = Number(text.slice(0, separator));
  const id = text.slice(separator + 1);
  if (separator <= 0 || !Number.isSafeInteger(createdAt) || createdAt < 0 || createdAt > latestTime) throw invalid();
  if (id === '' || id.length > maxIdLength || controlCharacter.test(id)) throw invalid();
  return { createdAt, id };
}
