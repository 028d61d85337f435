import type { ModelPrice, PriceTable } from './price-model.ts';

/**
 * Bundled list prices, US dollars per million tokens, standard (not batch, not priority) tier, as published by each
 * provider in late 2025. Keys are normalised names (see `normalisedModelNames` in price-lookup.ts): lower case, no
 * provider prefix, no dated suffix. An entry keyed `<provider>/<model>` applies only to that config provider (the same
 * open-weight model costs differently per host).
 *
 * Not modelled: long-context surcharges (Claude Sonnet 4/4.5 and Gemini 2.5 Pro charge more above 200k prompt
 * tokens; Grok 4 Fast above 128k), 1-hour Anthropic cache writes (2x input), audio and image tokens. A deployment's
 * `pricing` override corrects any of these for one deployment.
 *
 * Entries marked "uncertain" are the best figures we know but change often or were not confirmed; check them
 * against the provider's pricing page before relying on them for billing.
 */
export const bundledPriceTable: PriceTable = {
  // OpenAI. Cached input is the automatic prompt-cache rate; reasoning tokens are billed as output.
  'gpt-5': openAI(1.25, 0.125, 10),
  'gpt-5-mini': openAI(0.25, 0.025, 2),
  'gpt-5-nano': openAI(0.05, 0.005, 0.4),
  'gpt-5-chat': openAI(1.25, 0.125, 10),
  'gpt-4.1': openAI(2, 0.5, 8),
  'gpt-4.1-mini': openAI(0.4, 0.1, 1.6),
  'gpt-4.1-nano': openAI(0.1, 0.025, 0.4),
  'gpt-4o': openAI(2.5, 1.25, 10),
  // The first gpt-4o snapshot kept its launch price and has no cached rate.
  'gpt-4o-2024-05-13': { inputPerMillion: 5, outputPerMillion: 15 },
  'gpt-4o-mini': openAI(0.15, 0.075, 0.6),
  'chatgpt-4o': { inputPerMillion: 5, outputPerMillion: 15 },
  o1: openAI(15, 7.5, 60),
  'o1-preview': openAI(15, 7.5, 60),
  'o1-mini': openAI(1.1, 0.55, 4.4),
  // o3 after the June 2025 price cut (it launched at 10 / 40).
  o3: openAI(2, 0.5, 8),
  'o3-mini': openAI(1.1, 0.55, 4.4),
  'o4-mini': openAI(1.1, 0.275, 4.4),
  'gpt-4-turbo': { inputPerMillion: 10, outputPerMillion: 30 },
  'gpt-4': { inputPerMillion: 30, outputPerMillion: 60 },
  // gpt-3.5-turbo-0125; older snapshots (-1106: 1 / 2) are priced as this one after normalisation.
  'gpt-3.5-turbo': { inputPerMillion: 0.5, outputPerMillion: 1.5 },
  'text-embedding-3-small': embedding(0.02),
  'text-embedding-3-large': embedding(0.13),
  'text-embedding-ada-002': embedding(0.1),

  // Anthropic: cache reads at 0.1x input, 5-minute cache writes at 1.25x input.
  'claude-opus-4-5': anthropic(5, 25),
  'claude-opus-4-1': anthropic(15, 75),
  'claude-opus-4': anthropic(15, 75),
  'claude-sonnet-4-5': anthropic(3, 15),
  'claude-sonnet-4': anthropic(3, 15),
  'claude-3-7-sonnet': anthropic(3, 15),
  'claude-3-5-sonnet': anthropic(3, 15),
  'claude-haiku-4-5': anthropic(1, 5),
  'claude-3-5-haiku': anthropic(0.8, 4),
  'claude-3-opus': anthropic(15, 75),
  'claude-3-haiku': anthropic(0.25, 1.25),

  // Groq (on-demand). Groq serves most models under unique names; open-weight models other hosts also serve are
  // keyed by provider.
  'llama-3.3-70b-versatile': { inputPerMillion: 0.59, outputPerMillion: 0.79 },
  'llama-3.1-8b-instant': { inputPerMillion: 0.05, outputPerMillion: 0.08 },
  'groq/llama-4-scout-17b-16e-instruct': { inputPerMillion: 0.11, outputPerMillion: 0.34 },
  'groq/llama-4-maverick-17b-128e-instruct': { inputPerMillion: 0.2, outputPerMillion: 0.6 },
  // Uncertain: Groq has changed its gpt-oss, Qwen and Kimi prices since launch.
  'groq/gpt-oss-120b': { inputPerMillion: 0.15, outputPerMillion: 0.75 },
  'groq/gpt-oss-20b': { inputPerMillion: 0.1, outputPerMillion: 0.5 },
  'groq/qwen3-32b': { inputPerMillion: 0.29, outputPerMillion: 0.59 },
  'groq/kimi-k2-instruct': { inputPerMillion: 1, outputPerMillion: 3 },

  // Mistral (La Plateforme). `mistral-large-2411`, `mistral-small-latest` ... normalise to these.
  'mistral-large': { inputPerMillion: 2, outputPerMillion: 6 },
  'mistral-medium': { inputPerMillion: 0.4, outputPerMillion: 2 },
  'mistral-small': { inputPerMillion: 0.1, outputPerMillion: 0.3 },
  codestral: { inputPerMillion: 0.3, outputPerMillion: 0.9 },
  'pixtral-large': { inputPerMillion: 2, outputPerMillion: 6 },
  'ministral-8b': { inputPerMillion: 0.1, outputPerMillion: 0.1 },
  'ministral-3b': { inputPerMillion: 0.04, outputPerMillion: 0.04 },
  'open-mistral-nemo': { inputPerMillion: 0.15, outputPerMillion: 0.15 },
  'mistral-embed': embedding(0.1),

  // DeepSeek: V3.2 prices (from 2025-09-29) for both names; cached = "cache hit". DeepSeek reprices often: uncertain.
  'deepseek-chat': { inputPerMillion: 0.28, cachedInputPerMillion: 0.028, outputPerMillion: 0.42 },
  'deepseek-reasoner': { inputPerMillion: 0.28, cachedInputPerMillion: 0.028, outputPerMillion: 0.42 },

  // xAI. Cached rates of the Grok 3 family are uncertain.
  'grok-4': { inputPerMillion: 3, cachedInputPerMillion: 0.75, outputPerMillion: 15 },
  'grok-4-fast-reasoning': { inputPerMillion: 0.2, cachedInputPerMillion: 0.05, outputPerMillion: 0.5 },
  'grok-4-fast-non-reasoning': { inputPerMillion: 0.2, cachedInputPerMillion: 0.05, outputPerMillion: 0.5 },
  'grok-code-fast-1': { inputPerMillion: 0.2, cachedInputPerMillion: 0.02, outputPerMillion: 1.5 },
  'grok-3': { inputPerMillion: 3, cachedInputPerMillion: 0.75, outputPerMillion: 15 },
  'grok-3-mini': { inputPerMillion: 0.3, cachedInputPerMillion: 0.075, outputPerMillion: 0.5 },

  // Google Gemini (paid tier, prompts up to 200k tokens). Cached (context caching) rates are uncertain: Google cut
  // them during 2025.
  'gemini-2.5-pro': { inputPerMillion: 1.25, cachedInputPerMillion: 0.125, outputPerMillion: 10 },
  'gemini-2.5-flash': { inputPerMillion: 0.3, cachedInputPerMillion: 0.03, outputPerMillion: 2.5 },
  'gemini-2.5-flash-lite': { inputPerMillion: 0.1, cachedInputPerMillion: 0.01, outputPerMillion: 0.4 },
  'gemini-2.0-flash': { inputPerMillion: 0.1, cachedInputPerMillion: 0.025, outputPerMillion: 0.4 },
};

function openAI(inputPerMillion: number, cachedInputPerMillion: number, outputPerMillion: number): ModelPrice {
  return { inputPerMillion, cachedInputPerMillion, outputPerMillion };
}

function anthropic(inputPerMillion: number, outputPerMillion: number): ModelPrice {
  return {
    inputPerMillion,
    outputPerMillion,
    cachedInputPerMillion: round(inputPerMillion * 0.1),
    cacheWriteInputPerMillion: round(inputPerMillion * 1.25),
  };
}

function embedding(inputPerMillion: number): ModelPrice {
  return { inputPerMillion, outputPerMillion: 0 };
}

/** Rounds away binary noise (0.8 * 0.1 = 0.08000000000000002). */
function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
