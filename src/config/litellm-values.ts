import * as z from 'zod/mini';
import '../validation/zod-issues.ts';

/**
 * What a LiteLLM conversion found beside what it took: `warnings` for parts torii has no equivalent for (each
 * `<path>: not taken (<why>)`), `problems` for parts that make the file unusable (each `<path>: <why>`). Neither ever
 * holds a configured value, so a literal key in the file never reaches a log line or the check's output.
 */
export interface LiteLLMFindings {
  warnings: string[];
  problems: string[];
}

/** Records that `path` was not taken, and why. */
export function notTaken(findings: LiteLLMFindings, path: string, reason: string): void {
  findings.warnings.push(`${path}: not taken (${reason})`);
}

/** An object read from YAML (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A YAML value's kind, for problems ("expected a string, got a list"). */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}

const environmentPrefix = 'os.environ/';
const variableName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * LiteLLM's secret reference `os.environ/NAME` as torii's `${NAME}`; any other string as it is (a literal key stays
 * usable). Undefined when the reference names no valid variable.
 */
export function liteLLMText(value: string): string | undefined {
  if (!value.startsWith(environmentPrefix)) return value;
  const name = value.slice(environmentPrefix.length);
  return variableName.test(name) ? `\${${name}}` : undefined;
}

const textSchema = z.string().check(z.minLength(1));
const positiveIntegerSchema = z.int().check(z.positive());
const positiveNumberSchema = z.number().check(z.positive());
const nonNegativeIntegerSchema = z.int().check(z.gte(0));
const nonNegativeNumberSchema = z.number().check(z.gte(0));

/** Reads `value` at `path` with `schema`; a mismatch is a problem naming the path (and never the value). */
function read<T>(schema: z.ZodMiniType<T>, value: unknown, path: string, findings: LiteLLMFindings): T | undefined {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const expected = issue?.code === 'invalid_type' ? `expected ${issue.expected}, got ${kindOf(value)}` : issue?.message;
  findings.problems.push(`${path}: ${expected ?? 'invalid value'}`);
  return undefined;
}

/** A non-empty string, `os.environ/NAME` becoming `${NAME}`. */
export function readText(value: unknown, path: string, findings: LiteLLMFindings): string | undefined {
  const text = read(textSchema, value, path, findings);
  if (text === undefined) return undefined;
  const converted = liteLLMText(text);
  if (converted === undefined)
    findings.problems.push(`${path}: "os.environ/" must be followed by an environment variable name`);
  return converted;
}

/** A whole number above 0 (an `rpm`, a `tpm`). */
export function readPositiveInteger(value: unknown, path: string, findings: LiteLLMFindings): number | undefined {
  return read(positiveIntegerSchema, value, path, findings);
}

/** A whole number from 0 (an `order`, a `num_retries`). */
export function readNonNegativeInteger(value: unknown, path: string, findings: LiteLLMFindings): number | undefined {
  return read(nonNegativeIntegerSchema, value, path, findings);
}

/** A number above 0 (a `weight`). */
export function readPositiveNumber(value: unknown, path: string, findings: LiteLLMFindings): number | undefined {
  return read(positiveNumberSchema, value, path, findings);
}

/** A number from 0 (a cost per token). */
export function readNonNegativeNumber(value: unknown, path: string, findings: LiteLLMFindings): number | undefined {
  return read(nonNegativeNumberSchema, value, path, findings);
}

/**
 * LiteLLM's seconds (`timeout: 30`, `cooldown_time: 0.5`; YAML may give `"30"`) as whole milliseconds, at least 1.
 */
export function readSecondsAsMilliseconds(value: unknown, path: string, findings: LiteLLMFindings): number | undefined {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  const seconds = read(positiveNumberSchema, number, path, findings);
  return seconds === undefined ? undefined : Math.max(1, Math.round(seconds * 1000));
}

/** A mapping of header names to strings (`extra_headers`), `os.environ/NAME` values becoming `${NAME}`. */
export function readHeaders(
  value: unknown,
  path: string,
  findings: LiteLLMFindings,
): Record<string, string> | undefined {
  if (!isPlainObject(value)) {
    findings.problems.push(`${path}: expected a mapping of header names to values, got ${kindOf(value)}`);
    return undefined;
  }
  const headers: Record<string, string> = {};
  for (const [name, headerValue] of Object.entries(value)) {
    const text = readText(headerValue, `${path}.${name}`, findings);
    if (text !== undefined) headers[name] = text;
  }
  return headers;
}
