import { createUpstreamErrorMapper } from '../../src/errors/upstream-error-mapping.ts';
import type { GatewayError } from '../../src/errors.ts';

/**
 * Bedrock's error mapping, declared. Its error bodies are `{"message": "..."}` (some services' `{"Message": ...}`),
 * the error's type travels in the `x-amzn-errortype` header (`ValidationException:http://internal.amazon.com/...`),
 * which {@link mapBedrockError} copies into the body as `__type` (the field AWS's JSON protocols use for it).
 *
 * The statuses are the shared table's: 400 ValidationException stays a 400 with Bedrock's message (so routing still
 * sees "Input is too long for requested model." as a context-window failure), 403 AccessDeniedException is the
 * gateway's credentials (a retryable 502), 404 ResourceNotFoundException the configured model (502), 408
 * ModelTimeoutException a 504, 424 ModelErrorException a retryable 502, 429 ThrottlingException a 429, 500 a 502, 503
 * ServiceUnavailableException a 503. Types whose status says less than the type (Bedrock answers
 * ServiceQuotaExceededException with a 400; ModelNotReadyException is a 429) are re-read through `statusByType`; the
 * lower-camel names are the ones its streams use.
 */
export const bedrockErrorMapper = createUpstreamErrorMapper({
  provider: 'bedrock',
  label: 'Bedrock',
  fields: { message: ['message', 'Message', 'error.message'], type: ['__type'] },
  statusByType: {
    ValidationException: 400,
    validationException: 400,
    AccessDeniedException: 403,
    accessDeniedException: 403,
    UnrecognizedClientException: 403,
    ResourceNotFoundException: 404,
    resourceNotFoundException: 404,
    ModelTimeoutException: 408,
    modelTimeoutException: 408,
    ModelErrorException: 424,
    ModelStreamErrorException: 424,
    modelStreamErrorException: 424,
    ThrottlingException: 429,
    throttlingException: 429,
    ServiceQuotaExceededException: 429,
    serviceQuotaExceededException: 429,
    ModelNotReadyException: 429,
    InternalServerException: 500,
    internalServerException: 500,
    ServiceUnavailableException: 503,
    serviceUnavailableException: 503,
  },
});

/**
 * AWS answers a signature mismatch with the canonical request and string-to-sign it expected, which list every signed
 * header's value: a session token (`x-amz-security-token`) and the config's own headers among them. Neither the
 * client nor a log may see that part, so the message is cut where it begins.
 */
function withoutSignedRequest(body: unknown): unknown {
  const cut = (text: string) =>
    text.split(/\s*The (?:Canonical String|String-to-Sign) for this request should have been/)[0]!;
  if (typeof body === 'string') return cut(body);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const record = body as Record<string, unknown>;
  const copy: Record<string, unknown> = { ...record };
  for (const field of ['message', 'Message']) if (typeof record[field] === 'string') copy[field] = cut(record[field]);
  return copy;
}

/**
 * Maps a Bedrock error answer to a GatewayError that keeps Bedrock's message. The type from `x-amzn-errortype`
 * (the part before `:`) is added to a JSON object body as `__type` when the body has none, then the declared mapping
 * applies (see {@link bedrockErrorMapper}).
 *
 * @example
 * mapBedrockError(400, { message: 'Input is too long for requested model.' },
 *   new Headers({ 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' }));
 * // GatewayError { status: 400, type: 'invalid_request_error', message: 'Input is too long for requested model.' }
 */
export function mapBedrockError(status: number, received: unknown, headers: Headers): GatewayError {
  const body = withoutSignedRequest(received);
  const errorType = headers.get('x-amzn-errortype')?.split(':')[0]?.trim();
  const typed =
    errorType !== undefined &&
    errorType.length > 0 &&
    typeof body === 'object' &&
    body !== null &&
    !Array.isArray(body) &&
    (body as Record<string, unknown>).__type === undefined
      ? { ...(body as Record<string, unknown>), __type: errorType }
      : body;
  return bedrockErrorMapper.map(status, typed, headers);
}
