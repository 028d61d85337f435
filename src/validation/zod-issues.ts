import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';

// zod/mini ships without messages; load English once (and only English: the full locale table is ~100 KiB).
z.config(en());

/** One validation problem, with the offending field in OpenAI's `param` notation (`messages.[0].content`). */
export interface ValidationProblem {
  param: string | null;
  message: string;
}

/** Renders a zod path as OpenAI does in error `param`s: object keys joined by `.`, array indexes as `[n]`. */
export function formatIssuePath(path: readonly PropertyKey[]): string | null {
  if (path.length === 0) return null;
  return path.map((segment) => (typeof segment === 'number' ? `[${segment}]` : String(segment))).join('.');
}

/**
 * Picks the most useful issue of a failed parse: the deepest one, descending into union branches so that
 * "messages.[2].content: expected string" beats "messages.[2]: invalid input".
 */
export function firstValidationProblem(issues: readonly z.core.$ZodIssue[]): ValidationProblem {
  const issue = deepestIssue(issues, []);
  if (issue === undefined) return { param: null, message: 'Invalid request body.' };
  const param = formatIssuePath(issue.path);
  let message = issue.issue.message;
  if (issue.issue.code === 'unrecognized_keys') {
    const keys = issue.issue.keys;
    const field = param === null ? keys.join(', ') : `${param}.${keys.join(', ')}`;
    return {
      param: param === null ? (keys[0] ?? null) : `${param}.${keys[0]}`,
      message: `Unrecognized field: ${field}.`,
    };
  }
  message = message.replace(/^Invalid input: /, '');
  return {
    param,
    message: param === null ? `Invalid request: ${message}.` : `Invalid value for '${param}': ${message}.`,
  };
}

interface LocatedIssue {
  issue: z.core.$ZodIssue;
  path: PropertyKey[];
}

function deepestIssue(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[]): LocatedIssue | undefined {
  let best: LocatedIssue | undefined;
  for (const issue of issues) {
    const base = [...prefix, ...issue.path];
    let candidate: LocatedIssue = { issue, path: base };
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      for (const branch of issue.errors) {
        // Every branch is located from the union's own path, not from the branch that won so far.
        const inner = deepestIssue(branch, base);
        if (inner !== undefined && inner.path.length > candidate.path.length) candidate = inner;
      }
    }
    if (best === undefined || candidate.path.length > best.path.length) best = candidate;
  }
  return best;
}
