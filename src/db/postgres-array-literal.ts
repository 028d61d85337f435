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
  return `{${values.map(elementLiteral).join(',')}}`;
}
