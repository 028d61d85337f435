import { upstreamError, type GatewayError } from '../errors.ts';

/** A schema failure's issues, as far as naming the fields goes (zod's `error.issues`). */
export type SchemaIssues = readonly { path: readonly PropertyKey[] }[];

/** The fields a schema failure names (`output.message.content.0.text, usage`), for messages. */
export function invalidFieldNames(issues: SchemaIssues): string {
  return issues.map((issue) => issue.path.map(String).join('.') || '(root)').join(', ');
}

/**
 * The error for a successful upstream body a translator cannot read: the upstream broke its own protocol, so it is a
 * retryable 502 `upstream_invalid_response` (another deployment may answer properly), naming the invalid fields and
 * keeping the body for logs.
 *
 * @example
 * throw unreadableUpstreamBody('bedrock', 'Bedrock sent a response', parsed.error.issues, body);
 * // "Bedrock sent a response the gateway cannot read (invalid: output.message)."
 */
export function unreadableUpstreamBody(
  provider: string,
  what: string,
  issues: SchemaIssues,
  upstreamBody: unknown,
): GatewayError {
  return upstreamError(
    'upstream_invalid_response',
    provider,
    `${what} the gateway cannot read (invalid: ${invalidFieldNames(issues)}).`,
    { retryable: true, upstreamBody },
  );
}
