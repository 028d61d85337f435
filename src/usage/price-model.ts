/**
 * What one model costs, in US dollars per million tokens. Only `inputPerMillion` and `outputPerMillion` are
 * required; every other rate falls back to the rate of the tokens it is a kind of (cached and cache-write input fall
 * back to the input rate, reasoning falls back to the output rate).
 */
export interface ModelPrice {
  /** Prompt tokens that were neither read from nor written to a prompt cache. */
  inputPerMillion: number;
  /** Generated tokens (reasoning tokens included unless `reasoningPerMillion` says otherwise). */
  outputPerMillion: number;
  /** Prompt tokens read from the provider's prompt cache (OpenAI cached_tokens, Anthropic cache_read_input_tokens). */
  cachedInputPerMillion?: number;
  /** Prompt tokens written to the prompt cache (Anthropic cache_creation_input_tokens: 1.25x input for 5 minutes). */
  cacheWriteInputPerMillion?: number;
  /** Reasoning tokens; every provider we know bills them as output, so this is rarely set. */
  reasoningPerMillion?: number;
}

/**
 * A deployment's own prices (the deployment config's `pricing`): replaces any bundled rate it names. For a model the
 * bundled table does not know, rates it leaves out count as 0, so an override should name at least input and output.
 */
export type ModelPriceOverride = Partial<ModelPrice>;

/** A table of prices by normalised model name (lower case, no provider prefix, no dated suffix). */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** A price found for a model, and where it came from. */
export interface PriceMatch {
  price: ModelPrice;
  /** `bundled`: the bundled table alone; `override`: a deployment override (merged over the bundled price, if any). */
  source: 'bundled' | 'override';
  /** The table entry that matched (`gpt-4o` for `openai/gpt-4o-2024-08-06`); null when only an override applied. */
  matchedName: string | null;
}
