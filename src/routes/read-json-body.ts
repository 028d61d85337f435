import { GatewayError, invalidRequest } from '../errors.ts';
import { parseJson } from '../framing/parse-json.ts';
import { readLimitedText, requestTooLarge } from './model-request-source.ts';
import { defaultJsonLimits, findJsonLimitViolation, jsonLimitError, type JsonLimits } from '../framing/json-limits.ts';

/** What {@link readJsonObjectBody} enforces: the body's size, and the shape of its JSON. */
export interface RequestBodyLimits {
  /** Largest body in bytes. */
  bodyLimitBytes: number;
  /** Depth and per-container item bounds (default {@link defaultJsonLimits}). */
  jsonLimits?: JsonLimits;
}

/** What reading a body leaves besides the parsed object: its text (its length is the token estimate's input). */
export interface MeasuredBody {
  text?: string;
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
  measured?: MeasuredBody,
): Promise<Record<string, unknown>> {
  return readJsonObject((limit) => readLimitedText(request, limit), limits, measured);
}

/**
 * {@link readJsonObjectBody} over any body reader (a model request source's `readText`): the same limits, the
 * same errors. Answers synchronously (no promise, no microtask) when the reader has the text at once, as the Node
 * server's does for a body that came with its headers; errors are then thrown, else the promise rejects with them.
 */
export function readJsonObject(
  readText: (limitBytes: number) => string | Promise<string>,
  limits: number | RequestBodyLimits,
  measured?: MeasuredBody,
): Record<string, unknown> | Promise<Record<string, unknown>> {
  const limit = typeof limits === 'number' ? limits : limits.bodyLimitBytes;
  let read: string | Promise<string>;
  try {
    read = readText(limit);
  } catch (error) {
    throw readFailure(error);
  }
  if (typeof read === 'string') return parseBodyText(read, limit, limits, measured);
  return read.then(
    (text) => parseBodyText(text, limit, limits, measured),
    (error: unknown) => {
      throw readFailure(error);
    },
  );
}

/** What a body that could not be read is answered with: its own GatewayError (a 413), else a 400. */
function readFailure(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return invalidRequest('Could not read the request body.', null, 'invalid_body');
}

/** The checks and the parse of {@link readJsonObject}, once the text is read. */
function parseBodyText(
  text: string,
  limit: number,
  limits: number | RequestBodyLimits,
  measured: MeasuredBody | undefined,
): Record<string, unknown> {
  const jsonLimits = (typeof limits === 'number' ? undefined : limits.jsonLimits) ?? defaultJsonLimits;
  if (text.length > limit) throw requestTooLarge(limit);
  if (measured !== undefined) measured.text = text;
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
