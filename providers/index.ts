import type { ProviderRegistry } from '../src/canonical/index.ts';
import { anthropicTranslator } from './anthropic/index.ts';
import { builtinPresets } from './builtin-presets.ts';
import { azureOpenAITranslator } from './azure/index.ts';
import { bedrockAnthropicTranslator, bedrockTranslator } from './bedrock/index.ts';
import { cohereTranslator } from './cohere/index.ts';
import { geminiTranslator } from './gemini/index.ts';
import { openAICompatibleTranslator } from './openai-compatible/index.ts';
import { vertexAnthropicTranslator, vertexGeminiTranslator } from './vertex/index.ts';

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
    gemini: geminiTranslator,
    vertex: vertexGeminiTranslator,
    'vertex-anthropic': vertexAnthropicTranslator,
    bedrock: bedrockTranslator,
    'bedrock-anthropic': bedrockAnthropicTranslator,
    'azure-openai': azureOpenAITranslator,
    cohere: cohereTranslator,
  },
  presets: builtinPresets,
};

export { builtinPresets } from './builtin-presets.ts';
export { loadBuiltinProviders } from './lazy-providers.ts';
