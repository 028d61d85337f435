import type { ProviderPreset } from '../canonical/provider-translator.ts';
import type { GatewayConfig } from './config-schema.ts';

/** The model groups the embedded default config offers for each provider whose key is set in the environment. */
const defaultModels: Record<string, string[]> = {
  openai: ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'],
  anthropic: ['claude-sonnet-4-5', 'claude-haiku-4-5'],
  groq: ['llama-3.3-70b-versatile'],
  mistral: ['mistral-small-latest'],
  deepseek: ['deepseek-chat'],
  xai: ['grok-3-mini'],
};

/**
 * The embedded default used when no config file is given: for every preset whose conventional key variable is set
 * (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...), a few well-known model groups served by it. With no key set the
 * gateway still starts, with no model groups, and says so.
 */
export function createDefaultConfig(
  presets: Record<string, ProviderPreset>,
  environment: Record<string, string | undefined>,
): GatewayConfig {
  const modelGroups: GatewayConfig['modelGroups'] = {};
  for (const [provider, models] of Object.entries(defaultModels)) {
    const variable = presets[provider]?.apiKeyEnvironmentVariable;
    if (variable === undefined || !environment[variable]) continue;
    for (const model of models) {
      modelGroups[model] ??= { deployments: [{ provider, model, apiKey: `\${${variable}}` }] };
    }
  }
  return { modelGroups };
}
