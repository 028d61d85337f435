import type { HeaderReader } from './model-request-source.ts';

/** What a request forwards when its dialect names no headers: one shared object, not one per request. */
const noHeaders: Readonly<Record<string, string>> = Object.freeze({});

/**
 * The named headers a request carries, by lower-case name: the client protocol headers a dialect forwards to a
 * same-dialect upstream (`anthropic-version`, `anthropic-beta`). Dialects that forward none cost no allocation.
 *
 * @example
 * pickHeaders(request.headers, ['anthropic-version', 'anthropic-beta']); // { 'anthropic-version': '2023-06-01' }
 */
export function pickHeaders(
  headers: HeaderReader,
  names: readonly string[] | undefined,
): Readonly<Record<string, string>> {
  if (names === undefined || names.length === 0) return noHeaders;
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = headers.get(name);
    if (value !== null) picked[name] = value;
  }
  return picked;
}
