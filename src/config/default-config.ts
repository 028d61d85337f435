import type { ProviderPreset } from '../canonical/provider-translator.ts';
import type { GatewayConfig } from './config-schema.ts';

/**
 * The embedded default used when no config file is given: for every preset whose conventional key variable is set
 * (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...), a model group for each model of its `models` list, in the registry's
 * order (a model two presets list is served by the first). With no key set the gateway still starts, with no model
 * groups, and says so.
 */
export function createDefaultConfig(
  presets: Record<string, ProviderPreset>,
  environment: Record<string, string | undefined>,
): GatewayConfig {
  const modelGroups: GatewayConfig['modelGroups'] = {};
  for (const [provider, preset] of Object.entries(presets)) {
    const variable = preset.apiKeyEnvironmentVariable;
    if (variable === undefined || preset.models === undefined || !environment[variable]) continue;
    for (const model of preset.models) {
      modelGroups[model] ??= { deployments: [{ provider, model, apiKey: `\${${variable}}` }] };
    }
  }
  return { modelGroups };
}
