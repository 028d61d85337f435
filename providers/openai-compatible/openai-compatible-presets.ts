import type { ClientDialectId, ProviderPreset } from '../../src/canonical/index.ts';

const translator = 'openai-compatible';
/** What most OpenAI-compatible servers serve: chat and embeddings (a server without embeddings answers its own 404). */
const chatAndEmbeddings: readonly ClientDialectId[] = ['openai-chat', 'openai-embeddings'];
/** Servers that also keep OpenAI's legacy text completions (`/v1/completions`). */
const withCompletions: readonly ClientDialectId[] = [...chatAndEmbeddings, 'openai-completions'];
/** Chat only (embeddings would get the server's own 404 anyway; saying so keeps them off the pass-through path). */
const chatOnly: readonly ClientDialectId[] = ['openai-chat'];
/** Chat and legacy completions, no embeddings. */
const chatAndCompletions: readonly ClientDialectId[] = ['openai-chat', 'openai-completions'];

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
  // Cerebras: max_completion_tokens is its documented length field; frequency_penalty, presence_penalty and logit_bias
  // are answered with a 400 (passed on to the client as the upstream's error). Reasoning comes back as `reasoning`.
  cerebras: {
    translator,
    baseURL: 'https://api.cerebras.ai/v1',
    apiKeyEnvironmentVariable: 'CEREBRAS_API_KEY',
    nativeDialects: chatAndCompletions,
    options: { maxTokensField: 'max_completion_tokens' },
  },
  // SambaNova documents no key variable; SAMBANOVA_API_KEY is what other tools use. It ignores the penalties and
  // logit_bias, and refuses n > 1 together with tools.
  sambanova: {
    translator,
    baseURL: 'https://api.sambanova.ai/v1',
    apiKeyEnvironmentVariable: 'SAMBANOVA_API_KEY',
    nativeDialects: withCompletions,
  },
  // Perplexity's Sonar API has no /v1 in its base URL (https://api.perplexity.ai/v1 is its different Agent API) and
  // serves chat only, without tools; answers carry `citations` and `search_results`, reasoning models a <think>
  // section in the content.
  perplexity: {
    translator,
    baseURL: 'https://api.perplexity.ai',
    apiKeyEnvironmentVariable: 'PERPLEXITY_API_KEY',
    nativeDialects: chatOnly,
  },
  // DeepInfra's documented key variable is DEEPINFRA_TOKEN.
  deepinfra: {
    translator,
    baseURL: 'https://api.deepinfra.com/v1/openai',
    apiKeyEnvironmentVariable: 'DEEPINFRA_TOKEN',
    nativeDialects: withCompletions,
  },
  // Nebius Token Factory (formerly AI Studio, api.studio.nebius.com).
  nebius: {
    translator,
    baseURL: 'https://api.tokenfactory.nebius.com/v1',
    apiKeyEnvironmentVariable: 'NEBIUS_API_KEY',
    nativeDialects: withCompletions,
  },
  // Novita's LLM guide names this base URL; its parameter list has no tool_choice, parallel_tool_calls or user.
  // Reasoning comes back as `reasoning_content`.
  novita: {
    translator,
    baseURL: 'https://api.novita.ai/v3/openai',
    apiKeyEnvironmentVariable: 'NOVITA_API_KEY',
    nativeDialects: withCompletions,
  },
  // Hyperbolic documents chat completions (model, messages, max_tokens, temperature, top_p, stream, stop) only.
  hyperbolic: {
    translator,
    baseURL: 'https://api.hyperbolic.xyz/v1',
    apiKeyEnvironmentVariable: 'HYPERBOLIC_API_KEY',
    nativeDialects: chatOnly,
  },
  // Moonshot (Kimi), the global endpoint (China: https://api.moonshot.cn/v1 as the baseURL): max_tokens is deprecated
  // for max_completion_tokens; some models fix temperature, top_p and n. Reasoning comes back as `reasoning_content`.
  moonshot: {
    translator,
    baseURL: 'https://api.moonshot.ai/v1',
    apiKeyEnvironmentVariable: 'MOONSHOT_API_KEY',
    nativeDialects: chatOnly,
    options: { maxTokensField: 'max_completion_tokens' },
  },
  // Alibaba Model Studio (Qwen) in compatible mode, the international (Singapore) endpoint; keys are bound to their
  // region (Beijing: https://dashscope.aliyuncs.com/compatible-mode/v1). Qwen3 open models think by default, and
  // refuse that without streaming unless `enable_thinking: false` is sent.
  dashscope: {
    translator,
    baseURL: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
    apiKeyEnvironmentVariable: 'DASHSCOPE_API_KEY',
    nativeDialects: chatAndEmbeddings,
  },
  // Zhipu's GLM models: Z.ai (international) and BigModel (China), both under /api/paas/v4 (no /v1) and both
  // documenting ZAI_API_KEY. One stop word at most; `user_id` rather than `user`; thinking on by default.
  zai: {
    translator,
    baseURL: 'https://api.z.ai/api/paas/v4',
    apiKeyEnvironmentVariable: 'ZAI_API_KEY',
    nativeDialects: chatOnly,
  },
  zhipu: {
    translator,
    baseURL: 'https://open.bigmodel.cn/api/paas/v4',
    apiKeyEnvironmentVariable: 'ZAI_API_KEY',
    nativeDialects: chatAndEmbeddings,
  },
  ollama: { translator, baseURL: 'http://localhost:11434/v1', keyOptional: true, nativeDialects: withCompletions },
  // LM Studio's local server: no key unless "Require Authentication" is on (then its API token is the key).
  lmstudio: { translator, baseURL: 'http://localhost:1234/v1', keyOptional: true, nativeDialects: withCompletions },
  // llama.cpp's llama-server, at its default address (a key only when started with --api-key).
  'llama-cpp': { translator, baseURL: 'http://127.0.0.1:8080/v1', keyOptional: true, nativeDialects: withCompletions },
  // vLLM has no fixed address (its own default is http://localhost:8000/v1 but it usually runs elsewhere); a key is
  // needed only when the server was started with --api-key.
  vllm: { translator, baseURL: undefined, keyOptional: true, nativeDialects: withCompletions },
  // Any other OpenAI-shaped server: the config gives the base URL, and a key when the server wants one; it is assumed
  // to serve chat, embeddings and legacy completions (`nativeDialects` in its config says otherwise).
  'openai-compatible': { translator, baseURL: undefined, keyOptional: true, nativeDialects: withCompletions },
};
