import type { ProviderTranslator } from '../src/canonical/index.ts';

/**
 * The translators a bundle loads only when its config uses them, by translator id: each is its own chunk, so a
 * Worker whose config names only OpenAI-compatible and Anthropic deployments never evaluates (or pays start-up time
 * for) Cohere's, Gemini's or Bedrock's code.
 */
export const builtinTranslatorLoaders: Readonly<Record<string, () => Promise<ProviderTranslator>>> = {
  gemini: () => import('./gemini/gemini-translator.ts').then((module) => module.geminiTranslator),
  vertex: () => import('./vertex/vertex-gemini-translator.ts').then((module) => module.vertexGeminiTranslator),
  'vertex-anthropic': () =>
    import('./vertex/vertex-anthropic-translator.ts').then((module) => module.vertexAnthropicTranslator),
  bedrock: () => import('./bedrock/bedrock-translator.ts').then((module) => module.bedrockTranslator),
  'bedrock-anthropic': () =>
    import('./bedrock/bedrock-anthropic-translator.ts').then((module) => module.bedrockAnthropicTranslator),
  'azure-openai': () => import('./azure/azure-translator.ts').then((module) => module.azureOpenAITranslator),
  cohere: () => import('./cohere/cohere-translator.ts').then((module) => module.cohereTranslator),
};
