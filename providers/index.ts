import type { ProviderRegistry } from '../src/canonical/index.ts';
import { anthropicTranslator } from './anthropic/index.ts';
import { openAICompatiblePresets, openAICompatibleTranslator } from './openai-compatible/index.ts';

/**
 * The providers torii ships with: one translator per API format, plus config-only presets that name a translator,
 * a default base URL and the usual key variable. Adapters pass it to the gateway; a library user can extend it with
 * their own translators or presets.
 *
 * @example
 * import { builtinProviders } from './providers/index.ts';
 *
 * const registry = {
 *   translators: { ...builtinProviders.translators },
 *   presets: { ...builtinProviders.presets, 'my-lab': { translator: 'openai-compatible', baseURL: 'https://llm.internal/v1' } },
 * };
 */
export const builtinProviders: ProviderRegistry = {
  translators: {
    'openai-compatible': openAICompatibleTranslator,
    anthropic: anthropicTranslator,
  },
  presets: {
    // OpenAI first: the embedded default's groups keep the order they always had (OpenAI's, then Anthropic's, ...).
    openai: openAICompatiblePresets.openai!,
    anthropic: {
      translator: 'anthropic',
      baseURL: 'https://api.anthropic.com/v1',
      apiKeyEnvironmentVariable: 'ANTHROPIC_API_KEY',
      models: ['claude-sonnet-4-5', 'claude-haiku-4-5'],
    },
    ...openAICompatiblePresets,
  },
};
