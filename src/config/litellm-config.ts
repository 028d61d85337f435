import type { DeploymentConfig, GatewayConfig, ModelGroupConfig, RoutingStrategyName } from './config-schema.ts';
import { convertLiteLLMDeployment } from './litellm-deployment.ts';
import { isLiteLLMConfig } from './litellm-detect.ts';

export { isLiteLLMConfig };
import {
  isPlainObject,
  kindOf,
  notTaken,
  readNonNegativeInteger,
  readSecondsAsMilliseconds,
  readText,
  type LiteLLMFindings,
} from './litellm-values.ts';

/** A LiteLLM proxy config converted to torii's: the config, and what was not taken. */
export interface LiteLLMConversion extends LiteLLMFindings {
  /** torii's config, `${NAME}` references not yet substituted (give it to `parseGatewayConfig`). */
  config: GatewayConfig;
  /**
   * LiteLLM's `environment_variables`: values for `${NAME}` references the process environment leaves unset (the
   * process environment wins, as it does for LiteLLM's own `os.environ`). Values may be secrets: never log them.
   */
  environment: Record<string, string>;
  /** Where each torii deployment came from: `modelGroups.<group>.deployments[<i>]` -> `model_list[<j>]`. */
  origins: Record<string, string>;
}

/** LiteLLM's `routing_strategy` names and torii's. Strategies torii lacks route by weight (reported). */
const strategies: Readonly<Record<string, RoutingStrategyName>> = {
  'simple-shuffle': 'weighted',
  'least-busy': 'least-busy',
  'latency-based-routing': 'latency',
  'cost-based-routing': 'cost',
};

/** Why common settings are not taken; any other key gets a generic reason. */
const settingReasons: Readonly<Record<string, string>> = {
  model_group_alias: 'torii has no model aliases; name the group as clients do',
  redis_host: 'torii reads REDIS_URL from the environment',
  redis_port: 'torii reads REDIS_URL from the environment',
  redis_password: 'torii reads REDIS_URL from the environment',
  redis_url: 'torii reads REDIS_URL from the environment',
  drop_params: 'torii answers a parameter the upstream cannot take with a 400 naming it',
  success_callback: 'torii records usage in its own ledger and serves Prometheus metrics at /metrics',
  failure_callback: 'torii records usage in its own ledger and serves Prometheus metrics at /metrics',
  callbacks: 'torii records usage in its own ledger and serves Prometheus metrics at /metrics',
  cache: 'torii caches no responses',
  set_verbose: 'torii logs JSON lines to stdout and stderr',
  json_logs: 'torii logs JSON lines to stdout and stderr',
  master_key: 'set TORII_MASTER_KEY in the environment instead',
  database_url: "set DATABASE_URL in the environment instead; torii keeps its own tables and does not read LiteLLM's",
  enable_pre_call_checks: 'torii skips a deployment at its rpm or tpm; it makes no context-window check before a call',
};

/**
 * Converts a LiteLLM proxy `config.yaml` (already parsed) to torii's config: each `model_list` entry becomes a
 * deployment of the model group named by its `model_name`; keys, bases, versions, regions, projects, rpm/tpm, weight,
 * order, timeouts, retries, prices, cooldowns, strategy and fallbacks are taken. Everything else is reported per path
 * in `warnings`, never dropped silently; values of the wrong type are `problems`. Never throws, whatever `raw` is.
 *
 * @example
 * const { config, warnings, problems } = convertLiteLLMConfig(parseYaml(text));
 * if (problems.length > 0) throw new ConfigError(problems);
 * const gatewayConfig = parseGatewayConfig(config, process.env);
 */
export function convertLiteLLMConfig(raw: unknown): LiteLLMConversion {
  const findings: LiteLLMFindings = { warnings: [], problems: [] };
  const empty = { config: { modelGroups: {} }, environment: {}, origins: {}, ...findings };
  if (!isPlainObject(raw)) {
    findings.problems.push(`(root): expected a mapping with model_list, got ${kindOf(raw)}`);
    return empty;
  }
  if (!Array.isArray(raw.model_list)) {
    findings.problems.push(`model_list: expected a list of models, got ${kindOf(raw.model_list)}`);
    return empty;
  }
  const groups = new Map<string, { deployments: DeploymentConfig[]; origins: string[]; ordered: boolean }>();
  const ownTimeouts = new Set<DeploymentConfig>();
  raw.model_list.forEach((entry, index) => {
    const path = `model_list[${index}]`;
    const converted = convertLiteLLMDeployment(entry, path, findings);
    if (converted === undefined) return;
    let group = groups.get(converted.group);
    if (group === undefined) groups.set(converted.group, (group = { deployments: [], origins: [], ordered: false }));
    group.deployments.push(converted.deployment);
    group.origins.push(path);
    group.ordered ||= converted.ordered;
    if (converted.ownTimeout) ownTimeouts.add(converted.deployment);
  });

  const router = readSection(raw, 'router_settings', findings);
  const library = readSection(raw, 'litellm_settings', findings);
  const settings = readRouting(router, library, findings);
  const modelGroups = new Map<string, ModelGroupConfig>();
  const origins: Record<string, string> = {};
  for (const [name, group] of groups) {
    const deployments = group.deployments.map((deployment) =>
      settings.totalMs === undefined || ownTimeouts.has(deployment)
        ? deployment
        : { ...deployment, timeouts: { ...deployment.timeouts, totalMs: settings.totalMs } },
    );
    const modelGroup: ModelGroupConfig = { deployments };
    // LiteLLM's `order` tries lower orders first, whatever the strategy: torii's `priority` strategy does that.
    if (group.ordered) modelGroup.strategy = 'priority';
    modelGroups.set(name, modelGroup);
    group.origins.forEach((origin, index) => (origins[`modelGroups.${name}.deployments[${index}]`] = origin));
  }
  applyFallbacks(modelGroups, settings, router, library, findings);
  for (const [section, value] of Object.entries({ general_settings: raw.general_settings }))
    if (isPlainObject(value)) for (const key of Object.keys(value)) reportSetting(findings, section, key);
  const environment = readEnvironmentVariables(raw.environment_variables, findings);
  for (const key of Object.keys(raw))
    if (
      !['model_list', 'router_settings', 'litellm_settings', 'general_settings', 'environment_variables'].includes(key)
    )
      notTaken(findings, key, 'torii has no equivalent');

  const config: GatewayConfig = { modelGroups: Object.fromEntries(modelGroups) };
  if (settings.routing !== undefined) config.routing = settings.routing;
  return { config, environment, origins, ...findings };
}

/** A settings section (`router_settings`), or undefined when absent; a section that is not a mapping is a problem. */
function readSection(
  raw: Record<string, unknown>,
  name: string,
  findings: LiteLLMFindings,
): Record<string, unknown> | undefined {
  const section = raw[name];
  if (section === undefined || section === null) return undefined;
  if (isPlainObject(section)) return section;
  findings.problems.push(`${name}: expected a mapping, got ${kindOf(section)}`);
  return undefined;
}

function reportSetting(findings: LiteLLMFindings, section: string, key: string): void {
  notTaken(findings, `${section}.${key}`, settingReasons[key] ?? 'torii has no equivalent');
}

/** The router-wide settings torii takes, and where fallbacks are read from. */
interface RoutingSettings {
  routing: GatewayConfig['routing'];
  /** `timeout` / `request_timeout`, for every deployment without its own. */
  totalMs: number | undefined;
}

const fallbackKeys = ['fallbacks', 'context_window_fallbacks', 'content_policy_fallbacks', 'default_fallbacks'];

/**
 * `router_settings` and `litellm_settings`: LiteLLM passes both to its router, `router_settings` winning; so does
 * torii (the other is reported as not taken).
 */
function readRouting(
  router: Record<string, unknown> | undefined,
  library: Record<string, unknown> | undefined,
  findings: LiteLLMFindings,
): RoutingSettings {
  const routing: NonNullable<GatewayConfig['routing']> = {};
  let totalMs: number | undefined;
  const taken = new Map<string, string>();
  const takeOnce = (field: string, path: string): boolean => {
    const first = taken.get(field);
    if (first !== undefined) {
      notTaken(findings, path, `${first} is used`);
      return false;
    }
    taken.set(field, path);
    return true;
  };
  for (const [section, settings] of [
    ['router_settings', router],
    ['litellm_settings', library],
  ] as const) {
    if (settings === undefined) continue;
    for (const [key, value] of Object.entries(settings)) {
      const path = `${section}.${key}`;
      if (fallbackKeys.includes(key)) continue;
      if (key === 'routing_strategy' && section === 'router_settings') {
        const name = readText(value, path, findings);
        if (name === undefined) continue;
        const strategy = Object.hasOwn(strategies, name) ? strategies[name] : undefined;
        if (strategy !== undefined) routing.strategy = strategy;
        else
          notTaken(
            findings,
            path,
            name.startsWith('usage-based-routing')
              ? 'torii routes by weight and skips a deployment at its rpm or tpm'
              : `torii has no "${name}" strategy; it routes by weight`,
          );
      } else if (key === 'num_retries') {
        if (!takeOnce('retries', path)) continue;
        const retries = readNonNegativeInteger(value, path, findings);
        if (retries !== undefined) routing.retry = { ...routing.retry, retries: Math.min(retries, 10) };
        if (retries !== undefined && retries > 10)
          notTaken(findings, path, 'torii retries at most 10 times; 10 is used');
      } else if (key === 'retry_after' && section === 'router_settings') {
        const backoffMs = readSecondsAsMilliseconds(value, path, findings);
        if (backoffMs !== undefined) routing.retry = { ...routing.retry, backoffMs: Math.min(backoffMs, 60_000) };
      } else if (key === 'timeout' || key === 'request_timeout') {
        if (takeOnce('timeout', path)) totalMs = readSecondsAsMilliseconds(value, path, findings);
      } else if (key === 'allowed_fails' && section === 'router_settings') {
        // LiteLLM cools a deployment down once it fails more than `allowed_fails` times in a minute.
        const allowed = readNonNegativeInteger(value, path, findings);
        if (allowed !== undefined) routing.cooldown = { ...routing.cooldown, failures: allowed + 1, windowMs: 60_000 };
      } else if (key === 'cooldown_time' && section === 'router_settings') {
        const cooldownMs = readSecondsAsMilliseconds(value, path, findings);
        if (cooldownMs !== undefined)
          routing.cooldown = { ...routing.cooldown, cooldownMs: Math.min(Math.max(cooldownMs, 100), 3_600_000) };
      } else reportSetting(findings, section, key);
    }
  }
  return { routing: Object.keys(routing).length === 0 ? undefined : routing, totalMs };
}

/** LiteLLM's fallback keys and torii's group fields. */
const fallbackFields = {
  fallbacks: 'fallbacks',
  context_window_fallbacks: 'contextWindowFallbacks',
  content_policy_fallbacks: 'contentPolicyFallbacks',
} as const;

/**
 * `fallbacks: [{"gpt-4o": ["claude"]}]` (and the context-window and content-policy kinds) onto each group, from
 * `router_settings` or else `litellm_settings`; `{"*": [...]}` and `default_fallbacks` as torii's
 * `routing.defaultFallbacks`. A fallback naming a group that was not taken is reported and left out.
 */
function applyFallbacks(
  groups: Map<string, ModelGroupConfig>,
  settings: RoutingSettings,
  router: Record<string, unknown> | undefined,
  library: Record<string, unknown> | undefined,
  findings: LiteLLMFindings,
): void {
  const validTargets = (list: unknown, path: string, from: string | undefined): string[] => {
    if (!Array.isArray(list)) {
      findings.problems.push(`${path}: expected a list of model names, got ${kindOf(list)}`);
      return [];
    }
    const targets: string[] = [];
    list.forEach((item, index) => {
      const name = readText(item, `${path}[${index}]`, findings);
      if (name === undefined) return;
      if (!groups.has(name)) notTaken(findings, `${path}[${index}]`, `no model group "${name}" was taken`);
      else if (name === from) notTaken(findings, `${path}[${index}]`, 'a group cannot fall back to itself');
      else targets.push(name);
    });
    return targets;
  };
  const setDefaults = (targets: string[], path: string) => {
    if (targets.length === 0) return;
    if (settings.routing?.defaultFallbacks !== undefined) {
      notTaken(findings, path, 'default fallbacks are already set');
      return;
    }
    settings.routing = { ...settings.routing, defaultFallbacks: targets };
  };
  for (const [section, values] of [
    ['router_settings', router],
    ['litellm_settings', library],
  ] as const) {
    if (values === undefined) continue;
    if (values.default_fallbacks !== undefined)
      setDefaults(
        validTargets(values.default_fallbacks, `${section}.default_fallbacks`, undefined),
        `${section}.default_fallbacks`,
      );
    for (const [key, field] of Object.entries(fallbackFields)) {
      const list = values[key];
      const path = `${section}.${key}`;
      if (list === undefined || list === null) continue;
      if (!Array.isArray(list)) {
        findings.problems.push(`${path}: expected a list like [{"gpt-4o": ["claude"]}], got ${kindOf(list)}`);
        continue;
      }
      list.forEach((item, index) => {
        if (!isPlainObject(item)) {
          findings.problems.push(`${path}[${index}]: expected a mapping of a model name to its fallbacks`);
          return;
        }
        for (const [from, targets] of Object.entries(item)) {
          const at = `${path}[${index}].${from}`;
          if (from === '*' && field === 'fallbacks') {
            setDefaults(validTargets(targets, at, undefined), at);
            continue;
          }
          const group = groups.get(from);
          if (group === undefined) {
            notTaken(findings, at, `no model group "${from}" was taken`);
            continue;
          }
          if (group[field] !== undefined) {
            notTaken(findings, at, `${from}'s ${key} are already set`);
            continue;
          }
          const valid = validTargets(targets, at, from);
          if (valid.length > 0) group[field] = valid;
        }
      });
    }
  }
}

/**
 * LiteLLM's `environment_variables`: scalar values, as strings. Anything else is reported; values are never echoed.
 */
function readEnvironmentVariables(value: unknown, findings: LiteLLMFindings): Record<string, string> {
  const environment: Record<string, string> = {};
  if (value === undefined || value === null) return environment;
  if (!isPlainObject(value)) {
    findings.problems.push(`environment_variables: expected a mapping, got ${kindOf(value)}`);
    return environment;
  }
  for (const [name, item] of Object.entries(value)) {
    if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean')
      environment[name] = String(item);
    else if (item !== null)
      notTaken(findings, `environment_variables.${name}`, `a variable's value must be text, not ${kindOf(item)}`);
  }
  return environment;
}
