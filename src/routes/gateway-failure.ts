import { isGatewayError, renderErrorParts, toGatewayError, type RenderedError } from '../errors.ts';
import type { SecretRedactor } from '../security/secret-redactor.ts';
import { redactedError } from '../security/secret-redactor.ts';
import { describeErrorSafely } from '../security/safe-error-description.ts';
import type { GatewayLogger } from '../services.ts';
import { createThrottledErrorLog } from './error-log-throttle.ts';
import type { RequestRecord } from './request-record.ts';

/** Turns whatever a request's handling threw into the response its client gets (see {@link createFailureRenderer}). */
export type FailureRenderer = (error: unknown, record: RequestRecord | undefined) => RenderedError;

/**
 * The one place a failed request becomes its error response, for the gateway's error handler and the Node server's
 * direct path alike: a GatewayError as it is, anything else as a 500 `internal_error`; secrets redacted from the
 * message; rendered in the record's client envelope (OpenAI's before the route knew its dialect). Unexpected errors
 * are logged with their stack frames, and 5xx GatewayErrors with their cause, both throttled per code.
 *
 * @example
 * app.onError((error, c) => { const { status, headers, body } = renderFailure(error, c.var.record); ... });
 */
export function createFailureRenderer(
  logger: GatewayLogger,
  redactor: SecretRedactor,
  now: () => number,
): FailureRenderer {
  const logError = createThrottledErrorLog(logger, now);
  return (error, record) => {
    const gatewayError = redactedError(isGatewayError(error) ? error : toGatewayError(error), redactor);
    const requestId = record?.requestId;
    if (!isGatewayError(error))
      logError('error', 'internal_error', 'unhandled error', {
        requestId,
        error: describeErrorSafely(error),
        // Only the frames: the message lines before them may hold a statement's parameters.
        stack: (error as Error).stack
          ?.split('\n')
          .filter((line) => line.startsWith('    at '))
          .join('\n'),
      });
    else if (gatewayError.status >= 500)
      logError('warn', gatewayError.code ?? `status_${gatewayError.status}`, gatewayError.message, {
        requestId,
        ...(gatewayError.cause === undefined ? {} : { cause: describeErrorSafely(gatewayError.cause) }),
      });
    return renderErrorParts(gatewayError, record?.errorDialect ?? 'openai');
  };
}
