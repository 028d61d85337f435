import type {
  ClientDialectId,
  ProviderPreset,
  ProviderRegistry,
  ProviderTranslator,
} from '../canonical/provider-translator.ts';
import { ConfigError } from '../config/config-error.ts';
import type { GatewayConfig } from '../config/config-schema.ts';
import { resolveUpstreamLimits } from '../upstream/upstream-limits.ts';
import { lookupPrice } from '../usage/price-lookup.ts';
import type { PriceTable } from '../usage/price-model.ts';
import type { ModelPriceOverride } from '../usage/price-model.ts';
import type { ResolvedDeployment, ResolvedModelGroup } from './resolved-deployment.ts';
import { resolveCooldownPolicy, resolveRetryPolicy } from './routing-policy.ts';

function priceOverride(pricing: GatewayConfig['modelGroups'][string]['deployments'][number]['pricing']) {
  if (pricing === undefined) return undefined;
  const override: ModelPriceOverride = {};
  if (pricing.input !== undefined) override.inputPerMillion = pricing.input;
  if (pricing.output !== undefined) override.outputPerMillion = pricing.output;
  if (pricing.cachedInput !== undefined) override.cachedInputPerMillion = pricing.cachedInput;
  if (pricing.cacheWriteInput !== undefined) override.cacheWriteInputPerMillion = pricing.cacheWriteInput;
  if (pricing.reasoning !== undefined) override.reasoningPerMillion = pricing.reasoning;
  return override;
}

/**
 * The dialects a deployment passes through: the config's list, else the preset's, else all its translator can; a
 * dialect the translator cannot pass through is a config problem (returned as its text).
 */
function resolveNativeDialects(
  configured: readonly string[] | undefined,
  preset: ProviderPreset | undefined,
  translator: ProviderTranslator,
): ReadonlySet<ClientDialectId> | string {
  const wanted = configured ?? preset?.nativeDialects ?? translator.nativeDialects;
  const unknown = wanted.filter((dialect) => !(translator.nativeDialects as readonly string[]).includes(dialect));
  if (unknown.length > 0) {
    const possible = translator.nativeDialects.length === 0 ? 'none' : translator.nativeDialects.join(', ');
    return `translator "${translator.id}" cannot pass through ${unknown.join(', ')} (it can: ${possible})`;
  }
  return new Set(wanted as readonly ClientDialectId[]);
}

/** A group's health checks with their defaults, or undefined when it has none. */
function resolveHealthCheck(
  entry: GatewayConfig['modelGroups'][string]['healthCheck'],
): ResolvedModelGroup['healthCheck'] {
  if (entry === undefined) return undefined;
  return { intervalMs: entry.intervalMs, timeoutMs: entry.timeoutMs ?? 5000 };
}

/** Every fallback list must name groups of the config, and a group's own list must not name the group itself. */
function fallbackProblems(config: GatewayConfig): string[] {
  const problems: string[] = [];
  const check = (path: string, list: readonly string[] | undefined, self?: string) => {
    list?.forEach((fallback, index) => {
      if (!(fallback in config.modelGroups))
        problems.push(`${path}[${index}]: "${fallback}" is not a model group of this config`);
      else if (fallback === self) problems.push(`${path}[${index}]: a group cannot fall back to itself`);
    });
  };
  check('routing.defaultFallbacks', config.routing?.defaultFallbacks);
  for (const [name, group] of Object.entries(config.modelGroups)) {
    check(`modelGroups.${name}.fallbacks`, group.fallbacks, name);
    check(`modelGroups.${name}.contextWindowFallbacks`, group.contextWindowFallbacks, name);
    check(`modelGroups.${name}.contentPolicyFallbacks`, group.contentPolicyFallbacks, name);
  }
  return problems;
}

/** `own` over `defaults`, names compared without case (the later spelling wins). */
function mergeHeaders(
  defaults: Readonly<Record<string, string>> | undefined,
  own: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  if (defaults === undefined) return { ...own };
  const merged: Record<string, string> = {};
  const ownNames = new Set(Object.keys(own ?? {}).map((name) => name.toLowerCase()));
  for (const [name, value] of Object.entries(defaults)) if (!ownNames.has(name.toLowerCase())) merged[name] = value;
  return { ...merged, ...own };
}

/**
 * Resolves every deployment of the config against the provider registry: the translator, the preset's base URL
 * when the config gives none, whether a key is required, and each deployment's price from `priceTable` (under its
 * `pricing`). Reports every problem at once as a ConfigError.
 */
export function resolveModelGroups(
  config: GatewayConfig,
  registry: ProviderRegistry,
  priceTable: PriceTable = {},
): Map<string, ResolvedModelGroup> {
  const problems: string[] = [];
  const groups = new Map<string, ResolvedModelGroup>();
  const known = [...new Set([...Object.keys(registry.presets), ...Object.keys(registry.translators)])].sort();
  const routing = config.routing;
  problems.push(...fallbackProblems(config));
  for (const [name, group] of Object.entries(config.modelGroups)) {
    const deployments: ResolvedDeployment[] = [];
    const groupRetry = resolveRetryPolicy(routing?.retry, group.retry);
    group.deployments.forEach((deployment, index) => {
      const path = `modelGroups.${name}.deployments[${index}]`;
      const preset = registry.presets[deployment.provider];
      const translatorId = preset?.translator ?? deployment.provider;
      const translator: ProviderTranslator | undefined = registry.translators[translatorId];
      if (translator === undefined) {
        problems.push(
          `${path}.provider: unknown provider "${deployment.provider}"; known providers: ${known.join(', ')}`,
        );
        return;
      }
      if (translator.nativeDialects.length > 0 && translator.buildNativeRequest === undefined) {
        problems.push(
          `${path}.provider: translator "${translator.id}" declares native dialects but no buildNativeRequest`,
        );
        return;
      }
      const nativeDialects = resolveNativeDialects(deployment.nativeDialects, preset, translator);
      if (typeof nativeDialects === 'string') {
        problems.push(`${path}.nativeDialects: ${nativeDialects}`);
        return;
      }
      // The preset's defaults under the deployment's own options.
      const options = { ...preset?.options, ...deployment.options };
      const optionProblems = translator.validateOptions?.(options) ?? [];
      if (optionProblems.length > 0) {
        for (const problem of optionProblems) problems.push(`${path}.options.${problem}`);
        return;
      }
      const baseURL = deployment.baseURL ?? preset?.baseURL;
      if (baseURL === undefined) {
        problems.push(`${path}.baseURL: required for provider "${deployment.provider}" (it has no default base URL)`);
        return;
      }
      if (deployment.apiKey === undefined && preset?.keyOptional !== true) {
        problems.push(`${path}.apiKey: required for provider "${deployment.provider}"`);
        return;
      }
      const override = priceOverride(deployment.pricing);
      deployments.push({
        id: `${name}/${index}`,
        translator,
        weight: deployment.weight ?? 1,
        retry: resolveRetryPolicy(routing?.retry, group.retry, deployment.retry),
        priority: deployment.priority ?? 0,
        capacity: { rpm: deployment.rpm, tpm: deployment.tpm },
        limits: resolveUpstreamLimits(config.server, deployment),
        nativeDialects,
        // Priced once at start: the request path multiplies, it never searches the table.
        price: lookupPrice(deployment.model, {
          provider: deployment.provider,
          table: priceTable,
          ...(override === undefined ? {} : { override }),
        })?.price,
        target: {
          providerName: deployment.provider,
          baseURL: baseURL.replace(/\/+$/, ''),
          model: deployment.model,
          apiKey: deployment.apiKey,
          // The preset's headers under the deployment's own (a name is one header whatever its case).
          headers: mergeHeaders(preset?.headers, deployment.headers),
          options,
        },
      });
    });
    groups.set(name, {
      name,
      deployments,
      totalWeight: deployments.reduce((sum, deployment) => sum + deployment.weight, 0),
      strategy: group.strategy ?? routing?.strategy ?? 'weighted',
      retry: groupRetry,
      cooldown: resolveCooldownPolicy(routing?.cooldown, group.cooldown),
      healthCheck: resolveHealthCheck(group.healthCheck ?? routing?.healthCheck),
      fallbacks: (group.fallbacks ?? routing?.defaultFallbacks ?? []).filter((fallback) => fallback !== name),
      contextWindowFallbacks: group.contextWindowFallbacks ?? [],
      contentPolicyFallbacks: group.contentPolicyFallbacks ?? [],
    });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return groups;
}
