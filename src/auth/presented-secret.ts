import type { HeaderReader } from '../routes/model-request-source.ts';

/**
 * The longest secret an authenticator looks at, in characters (default of their `maxSecretLength`). A virtual key is
 * 52 characters; anything longer than this is refused with the usual 401 before it is hashed or looked up.
 */
export const maxPresentedSecretLength = 1024;

const space = 0x20;
const tab = 0x09;
const scheme = 'bearer';

const isWhitespace = (code: number): boolean => code === space || code === tab;

/** The value between leading and trailing spaces and tabs, found in one pass from each end. */
function trimmed(value: string): { start: number; end: number } {
  let start = 0;
  let end = value.length;
  while (start < end && isWhitespace(value.charCodeAt(start))) start++;
  while (end > start && isWhitespace(value.charCodeAt(end - 1))) end--;
  return { start, end };
}

/**
 * The token of an `Authorization` value: after a case-insensitive `Bearer` and whitespace, or the whole trimmed
 * value when it has no such scheme. `Bearer` alone reads as an empty token (refused as "no key"). Linear in the
 * value's length: each character is looked at at most twice (a backtracking pattern here cost a second of CPU for a
 * 16 KB header of spaces).
 */
function bearerToken(value: string): string {
  const { start, end } = trimmed(value);
  const afterScheme = start + scheme.length;
  const hasScheme =
    afterScheme <= end &&
    value.slice(start, afterScheme).toLowerCase() === scheme &&
    (afterScheme === end || isWhitespace(value.charCodeAt(afterScheme)));
  if (!hasScheme) return value.slice(start, end);
  let tokenStart = afterScheme;
  while (tokenStart < end && isWhitespace(value.charCodeAt(tokenStart))) tokenStart++;
  return value.slice(tokenStart, end);
}

/**
 * Reads the secret a client presents: `Authorization: Bearer <key>` (OpenAI SDK) or `x-api-key: <key>`
 * (Anthropic SDK). Returns undefined when neither is present, and an empty string for an empty key. The length is
 * not checked here: the authenticators refuse secrets over {@link maxPresentedSecretLength} before any hashing.
 */
export function presentedSecret(headers: HeaderReader): string | undefined {
  const authorization = headers.get('authorization');
  if (authorization !== null) return bearerToken(authorization);
  const apiKey = headers.get('x-api-key');
  if (apiKey === null) return undefined;
  const { start, end } = trimmed(apiKey);
  return apiKey.slice(start, end);
}
