/** The longest description logged for an error's cause. */
const longestDescription = 300;

/**
 * A description of an error fit for a log line: the name and the first line of the message of its innermost cause,
 * cut to 300 characters. Wrappers such as Drizzle's query errors put the statement and its parameters (key hashes,
 * customer metadata) on later lines and keep the driver's own error (`connect ECONNREFUSED`, `relation ... does
 * not exist`) as their cause: that is what an operator needs, and it carries no parameters.
 *
 * @example
 * logger.warn('key store down', { cause: describeErrorSafely(error) }); // 'Error: connect ECONNREFUSED 127.0.0.1:5432'
 */
export function describeErrorSafely(error: unknown): string {
  let innermost = error;
  for (let depth = 0; depth < 8; depth++) {
    const cause = innermost instanceof Error ? innermost.cause : undefined;
    if (cause === undefined || cause === null) break;
    innermost = cause;
  }
  const text =
    innermost instanceof Error
      ? `${innermost.name}: ${innermost.message}`
      : typeof innermost === 'string'
        ? innermost
        : typeof innermost;
  const firstLine = text.split('\n', 1)[0] as string;
  return firstLine.length > longestDescription ? `${firstLine.slice(0, longestDescription)}…` : firstLine;
}
