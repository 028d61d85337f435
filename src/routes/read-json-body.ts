import { GatewayError, invalidRequest } from '../errors.ts';
import { parseJson } from '../framing/parse-json.ts';
import { defaultJsonLimits, findJsonLimitViolation, jsonLimitError, type JsonLimits } from '../framing/json-limits.ts';

/** What {@link readJsonObjectBody} enforces: the body's size, and the shape of its JSON. */
export interface RequestBodyLimits {
  /** Largest body in bytes. */
  bodyLimitBytes: number;
  /** Depth and per-container item bounds (default {@link defaultJsonLimits}). */
  jsonLimits?: JsonLimits;
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError({
    status: 413,
    type: 'invalid_request_error',
    code: 'request_too_large',
    message: `Request body too large: the limit is ${limit} bytes.`,
  });
}

async function readLimitedText(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get('content-length');
  if (declared !== null) {
    if (Number(declared) > limit) throw tooLarge(limit);
    return await request.text();
  }
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  let received = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > limit) {
      await reader.cancel();
      throw tooLarge(limit);
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

/**
 * Reads a request body as a JSON object, enforcing the size limit before buffering when `content-length` is sent
 * and while reading when it is not. Empty, malformed or non-object bodies get a 400 in the client's envelope, and
 * so does JSON nested deeper or holding more items per array or object than `limits.jsonLimits` allows (checked on
 * the text in one linear pass before it is parsed, so nothing downstream, neither validation nor re-serialising,
 * ever sees unbounded depth). `limits` may be just the byte limit, with the default JSON limits.
 */
export async function readJsonObjectBody(
  request: Request,
  limits: number | RequestBodyLimits,
  measured?: { textLength: number },
): Promise<Record<string, unknown>> {
  const limit = typeof limits === 'number' ? limits : limits.bodyLimitBytes;
  const jsonLimits = (typeof limits === 'number' ? undefined : limits.jsonLimits) ?? defaultJsonLimits;
  let text: string;
  try {
    text = await readLimitedText(request, limit);
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    throw invalidRequest('Could not read the request body.', null, 'invalid_body');
  }
  if (text.length > limit) throw tooLarge(limit);
  if (measured !== undefined) measured.textLength = text.length;
  if (text.trim().length === 0)
    throw invalidRequest('The request body is empty; send a JSON object.', null, 'invalid_json');
  const violation = findJsonLimitViolation(text, jsonLimits);
  if (violation !== undefined) throw jsonLimitError(violation);
  const parsed = parseJson(text);
  if (!parsed.ok) {
    throw invalidRequest(
      `We could not parse the JSON body of your request (${parsed.error}). Send a valid JSON object with Content-Type: application/json.`,
      null,
      'invalid_json',
    );
  }
  if (typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)) {
    throw invalidRequest('The request body must be a JSON object.', null, 'invalid_json');
  }
  return parsed.value as Record<string, unknown>;
}
