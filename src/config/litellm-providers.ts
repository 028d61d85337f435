/**
 * Which torii provider serves a LiteLLM `litellm_params.model` (`<litellm provider>/<model>`), and which environment
 * variable LiteLLM itself reads for that provider's key when the entry gives no `api_key`. Only providers torii has a
 * translator or preset for are listed; any other prefix is reported as not taken.
 */
export interface LiteLLMProviderMapping {
  /** The torii provider (a preset name in providers/builtin-presets.ts). */
  provider: string;
  /** LiteLLM's key variable for this provider, used as `${NAME}` when the entry has no `api_key`. */
  keyVariable?: string;
  /** How LiteLLM's `api_base` for this provider becomes torii's `baseURL` (default: unchanged). */
  baseURL?: (apiBase: string) => string;
}

/** Ensures a base URL ends with `/v1` (LiteLLM's Ollama and Anthropic bases leave it out; torii's include it). */
function withVersionSegment(apiBase: string): string {
  const trimmed = apiBase.replace(/\/+$/, '');
  return /\/v1$/.test(trimmed) ? trimmed : `${trimmed}/v1`;
}

/** LiteLLM's Anthropic `api_base` may name the endpoint itself (`.../v1/messages`); torii's base stops at `/v1`. */
function anthropicBaseURL(apiBase: string): string {
  return withVersionSegment(apiBase.replace(/\/+$/, '').replace(/\/messages$/, ''));
}

/**
 * LiteLLM provider prefixes torii can serve, as LiteLLM's documentation names them. Key variables are LiteLLM's own
 * (`AZURE_API_KEY`, `TOGETHERAI_API_KEY`), so an environment that served LiteLLM serves torii unchanged.
 */
export const liteLLMProviderMappings: Readonly<Record<string, LiteLLMProviderMapping>> = {
  openai: { provider: 'openai', keyVariable: 'OPENAI_API_KEY' },
  anthropic: { provider: 'anthropic', keyVariable: 'ANTHROPIC_API_KEY', baseURL: anthropicBaseURL },
  azure: { provider: 'azure', keyVariable: 'AZURE_API_KEY' },
  gemini: { provider: 'gemini', keyVariable: 'GEMINI_API_KEY' },
  vertex_ai: { provider: 'vertex' },
  bedrock: { provider: 'bedrock' },
  cohere: { provider: 'cohere', keyVariable: 'COHERE_API_KEY' },
  cohere_chat: { provider: 'cohere', keyVariable: 'COHERE_API_KEY' },
  groq: { provider: 'groq', keyVariable: 'GROQ_API_KEY' },
  mistral: { provider: 'mistral', keyVariable: 'MISTRAL_API_KEY' },
  together_ai: { provider: 'together', keyVariable: 'TOGETHERAI_API_KEY' },
  deepseek: { provider: 'deepseek', keyVariable: 'DEEPSEEK_API_KEY' },
  xai: { provider: 'xai', keyVariable: 'XAI_API_KEY' },
  fireworks_ai: { provider: 'fireworks', keyVariable: 'FIREWORKS_AI_API_KEY' },
  openrouter: { provider: 'openrouter', keyVariable: 'OPENROUTER_API_KEY' },
  cerebras: { provider: 'cerebras', keyVariable: 'CEREBRAS_API_KEY' },
  sambanova: { provider: 'sambanova', keyVariable: 'SAMBANOVA_API_KEY' },
  perplexity: { provider: 'perplexity', keyVariable: 'PERPLEXITYAI_API_KEY' },
  deepinfra: { provider: 'deepinfra', keyVariable: 'DEEPINFRA_API_KEY' },
  nebius: { provider: 'nebius', keyVariable: 'NEBIUS_API_KEY' },
  novita: { provider: 'novita', keyVariable: 'NOVITA_API_KEY' },
  hyperbolic: { provider: 'hyperbolic', keyVariable: 'HYPERBOLIC_API_KEY' },
  moonshot: { provider: 'moonshot', keyVariable: 'MOONSHOT_API_KEY' },
  dashscope: { provider: 'dashscope', keyVariable: 'DASHSCOPE_API_KEY' },
  zai: { provider: 'zai', keyVariable: 'ZAI_API_KEY' },
  ollama: { provider: 'ollama', baseURL: withVersionSegment },
  ollama_chat: { provider: 'ollama', baseURL: withVersionSegment },
  lm_studio: { provider: 'lmstudio' },
  hosted_vllm: { provider: 'vllm' },
};

/** What a `litellm_params.model` resolves to: the torii provider, the upstream model name, the mapping used. */
export interface LiteLLMModelTarget {
  provider: string;
  model: string;
  mapping: LiteLLMProviderMapping;
}

/** Why a `litellm_params.model` has no torii target (a sentence for the report). */
export interface LiteLLMModelRefusal {
  reason: string;
}

/** Model names LiteLLM sends to a provider without a prefix, by the provider it infers. */
const bareModelProviders: readonly [RegExp, string][] = [
  [/^(gpt-|chatgpt-|o[134](-|$)|text-embedding-|davinci|babbage)/, 'openai'],
  [/^claude-/, 'anthropic'],
  [/^(command|embed-)/, 'cohere'],
];

const apiOpenAIHost = /^https:\/\/api\.openai\.com(\/|$)/;

/**
 * Resolves LiteLLM's `provider/model` string (`openai/gpt-4o`, `azure/my-deployment`, `bedrock/converse/<id>`,
 * `vertex_ai/claude-sonnet-4@20250514`, or a bare `gpt-4o` LiteLLM infers) to a torii provider and model. `openai/`
 * with an `api_base` other than OpenAI's is LiteLLM's way of naming any OpenAI-compatible server, so it becomes
 * torii's `openai-compatible`.
 *
 * @example
 * resolveLiteLLMModel('groq/llama-3.3-70b-versatile', undefined);
 * // { provider: 'groq', model: 'llama-3.3-70b-versatile', mapping: { provider: 'groq', keyVariable: 'GROQ_API_KEY' } }
 */
export function resolveLiteLLMModel(
  model: string,
  apiBase: string | undefined,
): LiteLLMModelTarget | LiteLLMModelRefusal {
  const slash = model.indexOf('/');
  if (slash <= 0) {
    const inferred = bareModelProviders.find(([pattern]) => pattern.test(model))?.[1];
    if (inferred === undefined)
      return { reason: `cannot tell which provider serves "${model}"; write it as <provider>/<model>` };
    return resolveLiteLLMModel(`${inferred}/${model}`, apiBase);
  }
  const prefix = model.slice(0, slash);
  let rest = model.slice(slash + 1);
  const mapping = Object.hasOwn(liteLLMProviderMappings, prefix) ? liteLLMProviderMappings[prefix] : undefined;
  if (mapping === undefined) return { reason: `torii has no provider for LiteLLM's "${prefix}"` };
  if (rest === '') return { reason: `no model after "${prefix}/"` };
  if (rest === '*' || rest.endsWith('/*')) return { reason: 'torii has no wildcard model routing; list each model' };
  let provider = mapping.provider;
  if (prefix === 'openai' && apiBase !== undefined && !apiOpenAIHost.test(apiBase)) provider = 'openai-compatible';
  if (prefix === 'vertex_ai') provider = /^claude-/.test(rest) ? 'vertex-anthropic' : 'vertex';
  if (prefix === 'bedrock') {
    const route = /^(converse|invoke)\/(.+)$/.exec(rest);
    if (route !== null) rest = route[2] as string;
    // Claude through InvokeModel keeps Anthropic's own Messages format: torii's `bedrock-anthropic`.
    if (route?.[1] === 'invoke' && /(^|\.)anthropic\./.test(rest)) provider = 'bedrock-anthropic';
  }
  return { provider, model: rest, mapping };
}
