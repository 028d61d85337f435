import type { ProviderRegistry } from '../canonical/provider-translator.ts';
import { resolveModelGroups } from '../routing/resolve-model-groups.ts';
import { ConfigError } from './config-error.ts';
import { convertConfigInput, withLiteLLMOrigin, type ConfigFormat } from './config-input.ts';
import { gatewayConfigSchema, type GatewayConfig } from './config-schema.ts';
import { isPlainObject } from './litellm-values.ts';
import { withPresetEnvironment } from './preset-environment.ts';
import { describeDeployment, type CheckedDeployment } from './config-check-values.ts';

/** What `checkGatewayConfig` is given besides the parsed file. */
export interface ConfigCheckOptions {
  /** Where the config came from (a file name), shown in the report. */
  source: string;
  /** The environment the gateway would start with. */
  environment: Readonly<Record<string, string | undefined>>;
  /**
   * The provider registry the gateway would use (the adapter passes its built-in one): with it, providers, options,
   * base URLs and keys are checked as at start; without it only the config's shape is.
   */
  providers?: ProviderRegistry;
}

/** One model group as the gateway would serve it. */
export interface CheckedModelGroup {
  name: string;
  /** The routing strategy in effect (the group's, else `routing.strategy`, else `weighted`). */
  strategy: string;
  fallbacks: string[];
  contextWindowFallbacks: string[];
  contentPolicyFallbacks: string[];
  deployments: CheckedDeployment[];
}

/** One environment variable the config reads. */
export interface CheckedEnvironmentVariable {
  name: string;
  /**
   * `set` in the environment; `file` from a LiteLLM file's `environment_variables`; `default` from `${NAME:-...}`;
   * `missing` when the gateway would refuse to start; `optional` for an unset variable a preset reads only if present.
   */
  status: 'set' | 'file' | 'default' | 'missing' | 'optional';
  /** The config fields that read it (or `<deployment> (<preset> preset)` for variables a preset reads). */
  paths: string[];
}

/**
 * What `check` found: the format, whether the gateway would start with it, every error with its path, every LiteLLM
 * part not taken, and what the config resolves to (groups, deployments with secrets masked, routing, variables).
 */
export interface ConfigCheckReport {
  source: string;
  format: ConfigFormat;
  /** True when the gateway would start with this config in this environment. */
  valid: boolean;
  errors: string[];
  warnings: string[];
  modelGroups: CheckedModelGroup[];
  /** Router-wide settings as written (strategy, retry, cooldown, health checks, default fallbacks). */
  routing: GatewayConfig['routing'];
  environmentVariables: CheckedEnvironmentVariable[];
}

const referencePattern = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
/** Deeper than this, a config is refused rather than walked (a config is a few levels deep; hostile YAML is not). */
const maximumDepth = 64;

interface ReferenceScan {
  substituted: unknown;
  variables: Map<string, CheckedEnvironmentVariable>;
  /** Fields holding a variable that is not set and has no default: their validation errors are this one. */
  missingPaths: string[];
  errors: string[];
}

/** `${NAME}` substitution that keeps going: unset references stay as written and are reported with their field. */
function scanReferences(
  raw: unknown,
  environment: Readonly<Record<string, string | undefined>>,
  fileNames: Set<string>,
): ReferenceScan {
  const scan: ReferenceScan = { substituted: undefined, variables: new Map(), missingPaths: [], errors: [] };
  const visit = (value: unknown, path: string, depth: number): unknown => {
    if (depth > maximumDepth) {
      scan.errors.push(`${path || '(root)'}: nested deeper than ${maximumDepth} levels`);
      return undefined;
    }
    if (typeof value === 'string') {
      return value.replace(referencePattern, (match, name: string, fallback: string | undefined) => {
        const found = environment[name];
        const set = found !== undefined && found !== '';
        const status = set ? (fileNames.has(name) ? 'file' : 'set') : fallback === undefined ? 'missing' : 'default';
        const variable = scan.variables.get(name) ?? { name, status, paths: [] };
        if (variable.status !== 'missing' && status === 'missing') variable.status = 'missing';
        variable.paths.push(path || '(root)');
        scan.variables.set(name, variable);
        if (set) return found;
        if (fallback !== undefined) return fallback;
        scan.missingPaths.push(path);
        scan.errors.push(`${path || '(root)'}: environment variable ${name} is not set`);
        return match;
      });
    }
    if (Array.isArray(value)) return value.map((item, index) => visit(item, `${path}[${index}]`, depth + 1));
    if (isPlainObject(value)) {
      const output: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value))
        Object.defineProperty(output, key, {
          value: visit(item, path ? `${path}.${key}` : key, depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      return output;
    }
    return value;
  };
  scan.substituted = visit(raw, '', 0);
  return scan;
}

/** A problem's field path (`a.b[0].c: reason` -> `a.b[0].c`). */
const pathOf = (problem: string) => problem.slice(0, Math.max(problem.indexOf(': '), 0));

/** Whether a problem is about a field already reported as reading an unset variable (or inside one). */
function coveredByMissing(problem: string, missingPaths: readonly string[]): boolean {
  const path = pathOf(problem).replace(/ \(from [^)]*\)$/, '');
  return missingPaths.some(
    (missing) => path === missing || path.startsWith(`${missing}.`) || path.startsWith(`${missing}[`),
  );
}

function formatIssuePath(path: readonly PropertyKey[]): string {
  return path
    .map((segment) => (typeof segment === 'number' ? `[${segment}]` : `.${String(segment)}`))
    .join('')
    .replace(/^\./, '');
}

/**
 * Validates a parsed config file, torii's or LiteLLM's, as the gateway would at start in `environment`, and says what
 * it resolved to. Never throws: whatever the input (not a mapping, wrong types, 5,000 entries, hostile nesting), the
 * outcome is a report whose `errors` name each problem by its path. Secrets never appear in it: keys and credentials
 * are shown as the `${NAME}` they come from, or as hidden literals.
 *
 * @example
 * const report = checkGatewayConfig(parseYaml(text), { source: 'litellm-config.yaml', environment: process.env, providers });
 * console.log(formatConfigCheckReport(report));
 * process.exitCode = report.valid ? 0 : 1;
 */
export function checkGatewayConfig(raw: unknown, options: ConfigCheckOptions): ConfigCheckReport {
  const report: ConfigCheckReport = {
    source: options.source,
    format: 'torii',
    valid: false,
    errors: [],
    warnings: [],
    modelGroups: [],
    routing: undefined,
    environmentVariables: [],
  };
  try {
    fillReport(report, raw, options);
  } catch (error) {
    // A stack overflow on hostile input, or a bug: reported, never thrown.
    report.errors.push(
      `(root): the config could not be checked (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  report.valid = report.errors.length === 0;
  return report;
}

function fillReport(report: ConfigCheckReport, raw: unknown, options: ConfigCheckOptions): void {
  const input = convertConfigInput(raw, options.environment);
  report.format = input.format;
  report.warnings = input.warnings;
  report.errors.push(...input.problems);
  const fileNames = new Set(
    Object.keys(input.environment).filter((name) => {
      const own = options.environment[name];
      return own === undefined || own === '';
    }),
  );
  const scan = scanReferences(input.raw, input.environment, fileNames);
  report.errors.push(...scan.errors.map((problem) => withLiteLLMOrigin(problem, input.origins)));
  const parsed = gatewayConfigSchema.safeParse(scan.substituted);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const problem = withLiteLLMOrigin(`${formatIssuePath(issue.path) || '(root)'}: ${issue.message}`, input.origins);
      if (!coveredByMissing(problem, scan.missingPaths)) report.errors.push(problem);
    }
    report.environmentVariables = [...scan.variables.values()];
    return;
  }
  let config = parsed.data;
  const providers = options.providers;
  if (providers !== undefined) {
    config = withPresetEnvironment(config, providers.presets, input.environment);
    try {
      resolveModelGroups(config, providers);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const problem of error.problems) {
        const explained = withLiteLLMOrigin(problem, input.origins);
        if (!coveredByMissing(explained, scan.missingPaths)) report.errors.push(explained);
      }
    }
  }
  const written = input.raw as GatewayConfig;
  report.routing = written.routing;
  for (const [name, group] of Object.entries(written.modelGroups)) {
    report.modelGroups.push({
      name,
      strategy: group.strategy ?? written.routing?.strategy ?? 'weighted',
      fallbacks: (group.fallbacks ?? written.routing?.defaultFallbacks ?? []).filter((fallback) => fallback !== name),
      contextWindowFallbacks: group.contextWindowFallbacks ?? [],
      contentPolicyFallbacks: group.contentPolicyFallbacks ?? [],
      deployments: group.deployments.map((deployment, index) => {
        const path = `modelGroups.${name}.deployments[${index}]`;
        const checked = describeDeployment(deployment, {
          environment: input.environment,
          preset: providers?.presets[deployment.provider],
          origin: input.origins[path],
        });
        for (const variable of checked.presetVariables) {
          const entry = scan.variables.get(variable.name) ?? {
            name: variable.name,
            status: variable.status,
            paths: [],
          };
          entry.paths.push(`${path} (${deployment.provider} preset)`);
          scan.variables.set(variable.name, entry);
        }
        return checked;
      }),
    });
  }
  report.environmentVariables = [...scan.variables.values()];
}
