import { GatewayError } from '../errors.ts';
import type { SecretRedactor } from './secret-redactor.ts';

/**
 * An upstream's error as the client may see it: naming the config's provider (translators know only their own id,
 * `openai-compatible`; operators read `groq`), with the gateway's secrets removed from the message (an upstream that
 * rejects a key often quotes it), and without the upstream's raw body; `upstreamStatus` is the HTTP status it came with.
 */
export function sanitizedUpstreamError(
  error: GatewayError,
  providerName: string,
  redactor: SecretRedactor,
  upstreamStatus = error.upstreamStatus,
): GatewayError {
  return new GatewayError({
    status: error.status,
    type: error.type,
    code: error.code,
    param: error.param,
    provider: providerName,
    retryable: error.retryable,
    ...(upstreamStatus === undefined ? {} : { upstreamStatus }),
    message: redactor.redact(error.message),
    cause: error.cause,
    ...(error.headers ? { headers: error.headers } : {}),
  });
}
