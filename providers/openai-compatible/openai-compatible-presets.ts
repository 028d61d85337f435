import type { ProviderPreset } from '../../src/canonical/index.ts';

const translator = 'openai-compatible';

/**
 * Config-only providers that reuse the OpenAI-compatible translator: a default base URL (checked against each
 * provider's own documentation) and the environment variable conventionally holding the key. Presets without a
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
  openai: { translator, baseURL: 'https://api.openai.com/v1', apiKeyEnvironmentVariable: 'OPENAI_API_KEY' },
  groq: { translator, baseURL: 'https://api.groq.com/openai/v1', apiKeyEnvironmentVariable: 'GROQ_API_KEY' },
  mistral: { translator, baseURL: 'https://api.mistral.ai/v1', apiKeyEnvironmentVariable: 'MISTRAL_API_KEY' },
  // Together's documentation now names api.together.ai; the older api.together.xyz host serves the same API.
  together: { translator, baseURL: 'https://api.together.ai/v1', apiKeyEnvironmentVariable: 'TOGETHER_API_KEY' },
  // DeepSeek documents https://api.deepseek.com and, "for compatibility with OpenAI", the same API under /v1.
  deepseek: { translator, baseURL: 'https://api.deepseek.com/v1', apiKeyEnvironmentVariable: 'DEEPSEEK_API_KEY' },
  xai: { translator, baseURL: 'https://api.x.ai/v1', apiKeyEnvironmentVariable: 'XAI_API_KEY' },
  fireworks: {
    translator,
    baseURL: 'https://api.fireworks.ai/inference/v1',
    apiKeyEnvironmentVariable: 'FIREWORKS_API_KEY',
  },
  openrouter: { translator, baseURL: 'https://openrouter.ai/api/v1', apiKeyEnvironmentVariable: 'OPENROUTER_API_KEY' },
  ollama: { translator, baseURL: 'http://localhost:11434/v1', keyOptional: true },
  // vLLM has no fixed address (its own default is http://localhost:8000/v1 but it usually runs elsewhere); a key is
  // needed only when the server was started with --api-key.
  vllm: { translator, baseURL: undefined, keyOptional: true },
  // Any other OpenAI-shaped server: the config gives the base URL, and a key when the server wants one.
  'openai-compatible': { translator, baseURL: undefined, keyOptional: true },
};
