import * as z from 'zod/mini';

/**
 * What text the admin API stores. Postgres `text` and `jsonb` cannot hold NUL, and a lone UTF-16 surrogate has no
 * UTF-8 form (drivers turn it into U+FFFD, and `jsonb` refuses its `\ud800` escape), so both are refused up front as
 * a 400 naming the field instead of failing in the database. Names, owners, teams, metadata keys and ids refuse every
 * control character as well (C0, DEL and C1: they are never part of a name and break logs and terminals); metadata
 * values keep tabs and line breaks.
 */

// The ranges are the point: control characters are what these patterns look for.
// eslint-disable-next-line no-control-regex
const anyControlCharacter = /[\u0000-\u001F\u007F-\u009F]/u;
// eslint-disable-next-line no-control-regex
const controlCharacterOtherThanWhitespace = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/u;
/** With the `u` flag, `\p{Cs}` matches only surrogates that are not part of a pair. */
const loneSurrogate = /\p{Cs}/u;

/** Whether `value` can be a name, owner, team, metadata key or id: no control characters, no lone surrogates. */
export function isAdminLabel(value: string): boolean {
  return !anyControlCharacter.test(value) && !loneSurrogate.test(value);
}

/** Whether `value` can be a metadata value: no NUL or other control characters but tab, CR and LF; no lone surrogates. */
export function isAdminText(value: string): boolean {
  return !controlCharacterOtherThanWhitespace.test(value) && !loneSurrogate.test(value);
}

const labelMessage = 'must not contain control characters or unpaired UTF-16 surrogates';
const textMessage =
  'must not contain NUL, control characters other than tab and line breaks, or unpaired UTF-16 surrogates';

/** A name-like string of 1 to `maxLength` characters ({@link isAdminLabel}). */
export function adminLabel(maxLength: number) {
  return z.string().check(z.minLength(1), z.maxLength(maxLength), z.refine(isAdminLabel, labelMessage));
}

/** A free-text string of at most `maxLength` characters ({@link isAdminText}). */
export function adminText(maxLength: number) {
  return z.string().check(z.maxLength(maxLength), z.refine(isAdminText, textMessage));
}
