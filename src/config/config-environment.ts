import { ConfigError } from './config-error.ts';

const referencePattern = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Replaces `${NAME}` and `${NAME:-default}` references in every string of a raw config with values from
 * `environment`. A reference to an unset variable without a default is reported with the field that holds it;
 * all such problems are reported at once.
 */
export function substituteEnvironmentReferences(
  raw: unknown,
  environment: Record<string, string | undefined>,
): unknown {
  const problems: string[] = [];
  const result = substitute(raw, environment, '', problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return result;
}

function substitute(
  value: unknown,
  environment: Record<string, string | undefined>,
  path: string,
  problems: string[],
): unknown {
  if (typeof value === 'string') {
    return value.replace(referencePattern, (_match, name: string, fallback: string | undefined) => {
      const found = environment[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      problems.push(`${path || '(root)'}: environment variable ${name} is not set`);
      return '';
    });
  }
  if (Array.isArray(value))
    return value.map((item, index) => substitute(item, environment, `${path}[${index}]`, problems));
  if (typeof value === 'object' && value !== null) {
    const output: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value))
      output[key] = substitute(item, environment, path ? `${path}.${key}` : key, problems);
    return output;
  }
  return value;
}
