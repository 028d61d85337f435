import { openAiEncodingForModel, type OpenAiEncoding } from '../../src/tokens/openai-token-encoding.ts';
import type { TokenCounter, Tokenizer } from '../../src/tokens/token-counter.ts';

/**
 * What the counter uses of one of gpt-tokenizer's encoding modules (`gpt-tokenizer/encoding/<name>`), spelled out so
 * the published declarations do not need gpt-tokenizer (an optional peer) installed.
 */
export interface GptTokenizerEncodingModule {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
}

/**
 * Imports an encoding's module on first use. The package is external to dist/server.js (scripts/build.mjs): its
 * 3.6 MB of vocabulary would otherwise be parsed by every process at start; Node and Deno load it from node_modules.
 */
const importAtRunTime = (encoding: OpenAiEncoding): Promise<GptTokenizerEncodingModule> =>
  encoding === 'o200k_base'
    ? import('gpt-tokenizer/encoding/o200k_base')
    : import('gpt-tokenizer/encoding/cl100k_base');

/** Special-token spellings in a client's text are ordinary text, as OpenAI encodes them (never an error). */
const plainText = { disallowedSpecial: new Set<string>() };

export interface GptTokenizerTokenCounterOptions {
  /** Loads an encoding's module; defaults to a dynamic import of gpt-tokenizer's (tests count the loads). */
  importEncoding?: (encoding: OpenAiEncoding) => Promise<GptTokenizerEncodingModule>;
}

/**
 * A TokenCounter over gpt-tokenizer (pure JavaScript, the tiktoken vocabularies): `o200k_base` or `cl100k_base` for
 * OpenAI models (see openAiEncodingForModel), nothing for other families. Each encoding is imported on the first
 * count that needs it (about 0.4 s and 60 MB for o200k_base) and kept for the life of the process; nothing is loaded
 * at start. A failed import stays failed (the gateway answers the estimate and logs it) rather than being retried on
 * every request.
 *
 * @example
 * const gateway = createGateway({ config, providers, authenticator, services: { tokenCounter: createGptTokenizerTokenCounter() } });
 */
export function createGptTokenizerTokenCounter(options: GptTokenizerTokenCounterOptions = {}): TokenCounter {
  const importEncoding = options.importEncoding ?? importAtRunTime;
  const tokenizers = new Map<OpenAiEncoding, Promise<Tokenizer>>();
  const load = async (encoding: OpenAiEncoding): Promise<Tokenizer> => {
    const module = await importEncoding(encoding);
    return { encoding, countTokens: (text) => module.countTokens(text, plainText) };
  };
  return {
    tokenizerFor(model) {
      const encoding = openAiEncodingForModel(model);
      if (encoding === undefined) return Promise.resolve(undefined);
      let tokenizer = tokenizers.get(encoding);
      if (tokenizer === undefined) {
        tokenizer = load(encoding);
        tokenizers.set(encoding, tokenizer);
      }
      return tokenizer;
    },
  };
}
