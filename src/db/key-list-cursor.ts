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

/** Decodes a cursor from {@link encodeKeyListCursor}; anything else is a 400 naming `cursor`. */
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
  if (separator <= 0 || !Number.isSafeInteger(createdAt) || createdAt < 0 || id === '') throw invalid();
  return { createdAt, id };
}
