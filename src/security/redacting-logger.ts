import type { GatewayLogger } from '../services.ts';
import type { SecretRedactor } from './secret-redactor.ts';

function redactValue(value: unknown, redactor: SecretRedactor): unknown {
  if (typeof value === 'string') return redactor.redact(value);
  if (value instanceof Error) return redactor.redact(String(value));
  if (typeof value !== 'object' || value === null) return value;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    return redactor.redact(String(value));
  }
  if (text === undefined) return value;
  const redacted = redactor.redact(text);
  return redacted === text ? value : (JSON.parse(redacted) as unknown);
}

function redactFields(
  fields: Record<string, unknown> | undefined,
  redactor: SecretRedactor,
): Record<string, unknown> | undefined {
  if (fields === undefined) return undefined;
  const result: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) result[name] = redactValue(value, redactor);
  return result;
}

/**
 * A logger that removes the gateway's secrets from every message and field before they reach the underlying one:
 * upstream error messages quote keys, connection errors quote URLs. Log lines are rare (errors, start-up), so the
 * extra work never touches the request path's common case.
 *
 * @example
 * const logger = createRedactingLogger(consoleLogger, createSecretRedactor([process.env.OPENAI_API_KEY ?? '']));
 */
export function createRedactingLogger(logger: GatewayLogger, redactor: SecretRedactor): GatewayLogger {
  const debug = logger.debug?.bind(logger);
  return {
    ...(debug === undefined
      ? {}
      : {
          debug: (message: string, fields?: Record<string, unknown>) =>
            debug(redactor.redact(message), redactFields(fields, redactor)),
        }),
    info: (message, fields) => logger.info(redactor.redact(message), redactFields(fields, redactor)),
    warn: (message, fields) => logger.warn(redactor.redact(message), redactFields(fields, redactor)),
    error: (message, fields) => logger.error(redactor.redact(message), redactFields(fields, redactor)),
  };
}
