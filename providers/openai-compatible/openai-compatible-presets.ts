import type { ClientDialectId, ProviderPreset } from '../../src/canonical/index.ts';

const translator = 'openai-compatible';
/** What most OpenAI-compatible servers serve: chat and embeddings (a server without embeddings answers its own 404). */
const chatAndEmbeddings: readonly ClientDialectId[] = ['openai-chat', 'openai-embeddings'];
/** Servers that also keep OpenAI's legacy text completions (`/v1/completions`). */
const withCompletions: readonly ClientDialectId[] = [...chatAndEmbeddings, 'openai-completions'];

/**
 * Config-only providers that reuse the OpenAI-compatible translator: a default base URL (checked against each
 * provider's own documentation), the environment variable conventionally holding the key, and the OpenAI client APIs
 * the provider serves natively (only OpenAI itself has the Responses API; the others get it translated). Presets without a
 * base URL (`vllm`, `openai-compatible`) need `baseURL` in the config; local servers need no key.
 *
 * @example
 * // torii.config.yaml
 * // modelGroups:
 * //   fast:
 * //     deployments:
 * //       - { provider: groq, model: llama-3.3-70b-versatile, apiKey: "${GROQ_API_KEY}" }
 * //       - { provider: ollama, model: llama3.2 }
 */
export const openAICompatiblePresets: Record<string, ProviderPreset> = {
  openai: {
    translator,
    baseURL: 'https://api.openai.com/v1',
    apiKeyEnvironmentVariable: 'OPENAI_API_KEY',
    nativeDialects: ['openai-chat', 'openai-embeddings', 'openai-responses', 'openai-completions'],
    // Every current OpenAI model takes max_completion_tokens, and its reasoning models refuse max_tokens (a request
    // translated from Anthropic Messages or the Responses API to gpt-5 would otherwise fail).
    options: { maxTokensField: 'max_completion_tokens' },
    models: ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'],
  },
  groq: {
    translator,
    baseURL: 'https://api.groq.com/openai/v1',
    apiKeyEnvironmentVariable: 'GROQ_API_KEY',
    nativeDialects: chatAndEmbeddings,
    models: ['llama-3.3-70b-versatile'],
  },
  mistral: {
    translator,
    baseURL: 'https://api.mistral.ai/v1',
    apiKeyEnvironmentVariable: 'MISTRAL_API_KEY',
    nativeDialects: chatAndEmbeddings,
    models: ['mistral-small-latest'],
  },
  // Together's documentation now names api.together.ai; the older api.together.xyz host serves the same API.
  together: {
    translator,
    baseURL: 'https://api.together.ai/v1',
    apiKeyEnvironmentVariable: 'TOGETHER_API_KEY',
    nativeDialects: withCompletions,
  },
  // DeepSeek documents https://api.deepseek.com and, "for compatibility with OpenAI", the same API under /v1.
  deepseek: {
    translator,
    baseURL: 'https://api.deepseek.com/v1',
    apiKeyEnvironmentVariable: 'DEEPSEEK_API_KEY',
    nativeDialects: chatAndEmbeddings,
    models: ['deepseek-chat'],
  },
  xai: {
    translator,
    baseURL: 'https://api.x.ai/v1',
    apiKeyEnvironmentVariable: 'XAI_API_KEY',
    nativeDialects: withCompletions,
    models: ['grok-3-mini'],
  },
  fireworks: {
    translator,
    baseURL: 'https://api.fireworks.ai/inference/v1',
    apiKeyEnvironmentVariable: 'FIREWORKS_API_KEY',
    nativeDialects: withCompletions,
  },
  openrouter: {
    translator,
    baseURL: 'https://openrouter.ai/api/v1',
    apiKeyEnvironmentVariable: 'OPENROUTER_API_KEY',
    nativeDialects: withCompletions,
  },
  ollama: { translator, baseURL: 'http://localhost:11434/v1', keyOptional: true, nativeDialects: withCompletions },
  // vLLM has no fixed address (its own default is http://localhost:8000/v1 but it usually runs elsewhere); a key is
  // needed only when the server was started with --api-key.
  vllm: { translator, baseURL: undefined, keyOptional: true, nativeDialects: withCompletions },
  // Any other OpenAI-shaped server: the config gives the base URL, and a key when the server wants one; it is assumed
  // to serve chat, embeddings and legacy completions (`nativeDialects` in its config says otherwise).
  'openai-compatible': { translator, baseURL: undefined, keyOptional: true, nativeDialects: withCompletions },
};
