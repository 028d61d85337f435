/** A value one element of a Postgres array literal can hold. */
export type ArrayElement = string | number | boolean | null;

/** Quotes one element: `NULL` for null, `t`/`f`, numbers as JavaScript prints them, strings double-quoted. */
function elementLiteral(value: ArrayElement): string {
  if (value === null) return 'NULL';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`array element ${value} is not a finite number`);
    return String(value);
  }
  // Most values (ids, model names) have nothing to escape: skip the two replacements for them.
  if (!value.includes('"') && !value.includes('\\')) return `"${value}"`;
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/**
 * The text form of a one-dimensional Postgres array (`{"a","b",NULL}`), to send as one string parameter cast to the
 * array type (`$1::text[]`). Serialising here rather than handing the driver a JavaScript array gives the same bytes
 * on every driver (postgres-js, PGlite, node-postgres under Hyperdrive), whose own array handling differs in how it
 * infers element types and treats null. JavaScript prints numbers in the shortest form that reads back exactly, so
 * `double precision` values round-trip.
 */
export function postgresArrayLiteral(values: readonly ArrayElement[]): string {
  return postgresArrayLiteralOf(values, (value) => value);
}

/**
 * {@link postgresArrayLiteral} of `read(item)` for each item, built in one pass without an intermediate array (the
 * usage sink encodes 20 columns of up to thousands of events per batch).
 */
export function postgresArrayLiteralOf<Item>(items: readonly Item[], read: (item: Item) => ArrayElement): string {
  let literal = '{';
  for (let index = 0; index < items.length; index++) {
    if (index > 0) literal += ',';
    literal += elementLiteral(read(items[index]!));
  }
  return literal + '}';
}
