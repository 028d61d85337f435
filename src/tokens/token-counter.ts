/**
 * The seam through which a runtime lends the gateway a real tokenizer, for `POST /v1/messages/count_tokens` to
 * deployments that cannot count tokens themselves. Without one (the Cloudflare Worker), or for a model it has no
 * tokenizer for, the gateway answers its documented estimate (estimateAnthropicInputTokens).
 *
 * The lookup is asynchronous and the counting synchronous: a tokenizer's vocabulary is megabytes of data an
 * implementation should load only when first asked (a dynamic import), while one request counts dozens to hundreds of
 * separate texts (each message, tool call and tool definition), which should not each cost an `await`.
 */
export interface TokenCounter {
  /**
   * The tokenizer of `model`'s family (`model` is the deployment's upstream model name, e.g. `gpt-4o-2024-08-06`), or
   * undefined when this counter has none for it. Loads the vocabulary on the first call that needs it; later calls
   * resolve from memory. It may reject (a vocabulary that cannot be loaded): the gateway then answers the estimate.
   */
  tokenizerFor(model: string): Promise<Tokenizer | undefined>;
}

/** One loaded tokenizer. */
export interface Tokenizer {
  /** The encoding's name (`o200k_base`, `cl100k_base`), reported as `x-torii-token-count: tokenizer:<encoding>`. */
  readonly encoding: string;
  /**
   * The number of tokens of `text` encoded as ordinary text: a special-token spelling inside it (`<|endoftext|>`)
   * counts as the characters it is, as the upstream treats text a client sends, never as an error.
   */
  countTokens(text: string): number;
}
