import type { ProviderRegistry, ProviderTranslator } from '../src/canonical/index.ts';
import { anthropicTranslator } from './anthropic/anthropic-translator.ts';
import { builtinPresets } from './builtin-presets.ts';
import { builtinTranslatorLoaders } from './builtin-translator-loaders.ts';
import { openAICompatibleTranslator } from './openai-compatible/openai-compatible-translator.ts';

/** A config's deployments, as far as choosing translators needs them. */
interface ProviderNames {
  modelGroups: Record<string, { deployments: readonly { provider: string }[] }>;
}

/**
 * The built-in registry with only the translators `config` uses loaded: OpenAI-compatible and Anthropic are always
 * there; any other is imported on demand ({@link builtinTranslatorLoaders}). For bundles that count their bytes (the
 * Worker); Node, Deno and the library use the eager `builtinProviders`. An unknown provider name loads nothing and is
 * reported by the config's resolution as usual.
 *
 * @example
 * const providers = await loadBuiltinProviders(config);
 * const app = createGateway({ config, providers, ... });
 */
export async function loadBuiltinProviders(config: ProviderNames): Promise<ProviderRegistry> {
  const translators: Record<string, ProviderTranslator> = {
    'openai-compatible': openAICompatibleTranslator,
    anthropic: anthropicTranslator,
  };
  const wanted = new Set<string>();
  for (const group of Object.values(config.modelGroups))
    for (const deployment of group.deployments)
      wanted.add(builtinPresets[deployment.provider]?.translator ?? deployment.provider);
  await Promise.all(
    [...wanted]
      .filter((id) => translators[id] === undefined && Object.hasOwn(builtinTranslatorLoaders, id))
      .map(async (id) => {
        translators[id] = await builtinTranslatorLoaders[id]!();
      }),
  );
  return { translators, presets: builtinPresets };
}
