/** The OpenAI encodings the gateway counts with. */
export type OpenAiEncoding = 'o200k_base' | 'cl100k_base';

/** Model-name prefixes (after normalisation, see openAiEncodingForModel) and their encoding, first match wins. */
const encodingsByModel: readonly [RegExp, OpenAiEncoding][] = [
  // gpt-4o, gpt-4.1, gpt-4.5, the gpt-5 family, the o-series, chatgpt-4o-latest, gpt-oss (o200k_harmony, whose
  // ordinary-text tokens are o200k_base's).
  [/^(?:gpt-4o|gpt-4\.1|gpt-4\.5|chatgpt-4o|o1|o3|o4)(?:$|-)/, 'o200k_base'],
  [/^gpt-5(?:$|[-.])/, 'o200k_base'],
  [/^gpt-oss(?:$|[-:])/, 'o200k_base'],
  // gpt-4 itself (gpt-4-turbo, gpt-4-0613, gpt-4-32k ...; gpt-4o and gpt-4.1 matched above), gpt-3.5-turbo (Azure
  // spells it gpt-35-turbo), the text-embedding-3 models.
  [/^gpt-4(?:$|-)/, 'cl100k_base'],
  [/^gpt-3\.?5-turbo(?:$|-)/, 'cl100k_base'],
  [/^text-embedding-3(?:$|-)/, 'cl100k_base'],
];

/**
 * The encoding of an OpenAI model's tokenizer, chosen by the upstream model name; undefined for every other family
 * (Llama, Mistral, Qwen, Gemini, DeepSeek ...), whose counts stay the gateway's estimate. The name is read
 * case-insensitively and without the wrappers routers and hosts put around OpenAI's names: a path
 * (`openai/gpt-oss-120b` on OpenRouter and Groq, `accounts/fireworks/models/gpt-oss-20b`), Bedrock's `openai.` prefix
 * and a fine-tune's `ft:`.
 *
 * @example
 * openAiEncodingForModel('gpt-4o-mini'); // 'o200k_base'
 * openAiEncodingForModel('gpt-4-turbo'); // 'cl100k_base'
 * openAiEncodingForModel('llama-3.3-70b-versatile'); // undefined
 */
export function openAiEncodingForModel(model: string): OpenAiEncoding | undefined {
  const name = (model.toLowerCase().split('/').at(-1) ?? '').replace(/^ft:/, '').replace(/^openai\./, '');
  return encodingsByModel.find(([pattern]) => pattern.test(name))?.[1];
}
