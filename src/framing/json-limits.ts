import { invalidRequest, type GatewayError } from '../errors.ts';

/** Bounds on the shape of a JSON document a client sends. */
export interface JsonLimits {
  /** Most objects and arrays nested inside one another; the outermost value counts as 1. */
  maxDepth: number;
  /** Most items in one array, or members in one object. */
  maxElements: number;
}

/**
 * The defaults: 128 levels, and 100,000 items per array or object. Each level of a JSON Schema costs two levels of
 * JSON (`properties`, then the property's schema), so a schema nested 30 deep inside `tools[].function.parameters`
 * sits at about 65; 128 leaves room for `anyOf`/`items` and stays far below the few thousand levels that overflow
 * the stack of `JSON.stringify`. OpenAI caps `messages` at 2,048 and embeddings `input` at 2,048 items (token arrays
 * of up to 8,192 tokens); Anthropic caps `messages` at 100,000.
 */
export const defaultJsonLimits: Readonly<JsonLimits> = { maxDepth: 128, maxElements: 100_000 };

/** What {@link findJsonLimitViolation} found out of bounds. */
export interface JsonLimitViolation {
  /** `depth`: a container opens deeper than `maxDepth`; `elements`: a container holds more than `maxElements`. */
  kind: 'depth' | 'elements';
  /** Whether the offending container is an array or an object. */
  container: 'array' | 'object';
  /** The offending container's path in OpenAI `param` notation (`messages.[0].content`); null for the document. */
  param: string | null;
  /** The limit it broke. */
  limit: number;
}

const quote = 34;
const backslash = 92;
const comma = 44;
const openBracket = 91;
const closeBracket = 93;
const openBrace = 123;
const closeBrace = 125;

// Commas seen at each open level. Kept between calls: the scan is synchronous, so one stack serves every call.
let commaCounts = new Int32Array(128);

/**
 * The position of the quote closing the string whose opening quote is at `start`, or -1 when it is unterminated.
 * Short strings (member names, roles) are read character by character; past a few characters it jumps from quote to
 * quote with `indexOf`, a quote preceded by an odd run of backslashes being escaped. Each run of backslashes is
 * looked at once, so the whole scan stays linear.
 */
function stringEnd(text: string, start: number): number {
  const shortEnd = Math.min(start + 24, text.length);
  let index = start + 1;
  for (; index < shortEnd; index++) {
    const code = text.charCodeAt(index);
    if (code === quote) return index;
    if (code === backslash) index++;
  }
  // `index` is past any escape begun above, so a quote before it cannot be mistaken for the end.
  let end = text.indexOf('"', index);
  while (end !== -1 && text.charCodeAt(end - 1) === backslash) {
    let run = 1;
    while (end - 1 - run > start && text.charCodeAt(end - 1 - run) === backslash) run++;
    if ((run & 1) === 0) return end;
    end = text.indexOf('"', end + 1);
  }
  return end;
}

/**
 * The fast path for ordinary bodies: an array or object of more than `maxElements` items takes at least
 * `2 * maxElements + 1` characters, and nesting deeper than `maxDepth` takes more than `maxDepth` opening brackets
 * and braces (counted anywhere, strings included, with `indexOf`, which skips everything else at native speed). A
 * chat body has a handful of them, so it is cleared without reading it character by character.
 */
function withinLimitsAtAGlance(text: string, maxDepth: number, maxElements: number): boolean {
  if (text.length > 2 * maxElements) return false;
  let openings = 0;
  for (let at = text.indexOf('{'); at !== -1; at = text.indexOf('{', at + 1)) if (++openings > maxDepth) return false;
  for (let at = text.indexOf('['); at !== -1; at = text.indexOf('[', at + 1)) if (++openings > maxDepth) return false;
  return true;
}

/**
 * Checks a JSON text against {@link JsonLimits} before it is parsed: one pass, linear in the text's length, with no
 * recursion (a body nested 100,000 levels deep is refused at level `maxDepth + 1`, a 2-million-item array at item
 * `maxElements + 1`). String contents are skipped with `indexOf`, so an ordinary chat body costs well under a
 * microsecond per kilobyte. Text that is not valid JSON is left for the parser to report: the scan only answers for
 * what it could read.
 *
 * @example
 * const violation = findJsonLimitViolation(text, defaultJsonLimits);
 * if (violation !== undefined) throw jsonLimitError(violation);
 * const body = JSON.parse(text);
 */
export function findJsonLimitViolation(text: string, limits: JsonLimits): JsonLimitViolation | undefined {
  const { maxDepth, maxElements } = limits;
  if (withinLimitsAtAGlance(text, maxDepth, maxElements)) return undefined;
  if (commaCounts.length <= maxDepth) commaCounts = new Int32Array(maxDepth + 1);
  const counts = commaCounts;
  const length = text.length;
  let depth = 0;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code === quote) {
      index = stringEnd(text, index);
      if (index === -1) return undefined;
    } else if (code === comma) {
      // n commas in a container mean n + 1 items.
      if (depth > 0 && ++counts[depth]! >= maxElements) return locateViolation(text, index, 'elements', maxElements);
    } else if (code === openBracket || code === openBrace) {
      if (++depth > maxDepth) return locateViolation(text, index, 'depth', maxDepth);
      counts[depth] = 0;
    } else if (code === closeBracket || code === closeBrace) {
      if (--depth < 0) return undefined;
    }
  }
  return undefined;
}

interface Frame {
  kind: 'array' | 'object';
  /** Current item index (arrays). */
  index: number;
  /** Current member name (objects). */
  key: string;
  /** Whether the next string in this object is a member name. */
  expectingKey: boolean;
}

const longestKey = 64;

function keyAt(text: string, start: number, end: number): string {
  let key = text.slice(start + 1, end);
  if (key.includes('\\')) {
    try {
      key = JSON.parse(text.slice(start, end + 1)) as string;
    } catch {
      // Malformed escapes: keep the raw text.
    }
  }
  return key.length > longestKey ? `${key.slice(0, longestKey)}…` : key;
}

/**
 * Builds the violation for the container found at `position` (an opening bracket for `depth`, a comma inside it for
 * `elements`) by scanning again up to there, this time tracking member names and indexes. Runs only on refusal.
 */
function locateViolation(
  text: string,
  position: number,
  kind: JsonLimitViolation['kind'],
  limit: number,
): JsonLimitViolation {
  const frames: Frame[] = [];
  for (let index = 0; index < position; index++) {
    const code = text.charCodeAt(index);
    const top = frames.at(-1);
    if (code === quote) {
      const end = stringEnd(text, index);
      if (top !== undefined && top.kind === 'object' && top.expectingKey) {
        top.key = keyAt(text, index, end);
        top.expectingKey = false;
      }
      index = end;
    } else if (code === comma && top !== undefined) {
      top.index++;
      top.expectingKey = top.kind === 'object';
    } else if (code === openBracket || code === openBrace) {
      frames.push({
        kind: code === openBracket ? 'array' : 'object',
        index: 0,
        key: '',
        expectingKey: code === openBrace,
      });
    } else if (code === closeBracket || code === closeBrace) {
      frames.pop();
    }
  }
  const opening = text.charCodeAt(position);
  // For `depth`, the offender is the container opening at `position`, a value inside the innermost frame; for
  // `elements`, it is the innermost frame itself.
  const container =
    kind === 'depth' ? (opening === openBracket ? 'array' : 'object') : (frames.at(-1)?.kind ?? 'array');
  const path = (kind === 'depth' ? frames : frames.slice(0, -1)).map((frame) =>
    frame.kind === 'array' ? frame.index : frame.key,
  );
  return { kind, container, param: formatPath(path), limit };
}

/** Path segments shown at either end of a long path, and the longest key shown: a `param` stays short. */
const shownLeadingSegments = 6;
const shownTrailingSegments = 2;
const longestShownKey = 64;

/**
 * A path in OpenAI `param` notation, as `formatIssuePath` (src/validation) writes zod's: `messages.[0].content`. A
 * client chooses the keys and the depth, so the path is kept short: keys over 64 characters are cut, and a path
 * deeper than 8 segments keeps its first 6 and last 2 around `…` (`metadata.note.[0].[0].[0].[0].….[0].[0]`).
 */
function formatPath(path: readonly (string | number)[]): string | null {
  if (path.length === 0) return null;
  const segment = (value: string | number): string =>
    typeof value === 'number'
      ? `[${value}]`
      : value.length > longestShownKey
        ? `${value.slice(0, longestShownKey)}…`
        : value;
  if (path.length <= shownLeadingSegments + shownTrailingSegments) return path.map(segment).join('.');
  return [
    ...path.slice(0, shownLeadingSegments).map(segment),
    '…',
    ...path.slice(-shownTrailingSegments).map(segment),
  ].join('.');
}

/**
 * The 400 for a {@link JsonLimitViolation}, in OpenAI's words where OpenAI has some (`array_above_max_length`).
 * `param` replaces the violation's own path, for JSON found inside a string field (tool call arguments).
 */
export function jsonLimitError(violation: JsonLimitViolation, param: string | null = violation.param): GatewayError {
  const subject = param === null ? 'request body' : `'${param}'`;
  if (violation.kind === 'depth') {
    return invalidRequest(
      `Invalid ${subject}: nested too deeply. JSON objects and arrays may nest at most ${violation.limit} levels deep.`,
      param,
      'json_too_deep',
    );
  }
  if (violation.container === 'array') {
    return invalidRequest(
      `Invalid ${subject}: array too long. Expected an array with maximum length ${violation.limit}.`,
      param,
      'array_above_max_length',
    );
  }
  return invalidRequest(
    `Invalid ${subject}: too many fields. Expected an object with at most ${violation.limit} fields.`,
    param,
    'object_above_max_fields',
  );
}
