/**
 * Structured logging: a message and fields, written as one JSON line with an ISO-8601 `time` and the `level` (see
 * json-logger.ts). Implementations drop lines below their level. Messages and fields must hold no secret: the gateway
 * wraps its logger in a redacting one (src/security/redacting-logger.ts) for what it cannot vouch for (upstream
 * messages, connection errors).
 */
export interface GatewayLogger {
  /** Detail for diagnosing a problem; written only at `TORII_LOG_LEVEL=debug`. Optional for older implementations. */
  debug?(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}
