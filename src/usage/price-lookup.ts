import type { ModelPrice, ModelPriceOverride, PriceMatch, PriceTable } from './price-model.ts';

/** What {@link lookupPrice} may use besides the model name. */
export interface PriceLookupOptions {
  /** The config's provider name (`groq`); entries keyed `<provider>/<model>` are tried first for it. */
  provider?: string;
  /** The deployment's `pricing`: merged over the bundled price, or used alone for a model the table does not know. */
  override?: ModelPriceOverride;
  /**
   * The table to search: the bundled one (src/usage/price-table.ts, which adapters load and pass in, so a Worker can
   * keep it out of its start-up bundle), or a test's own. Without it only an override prices a model.
   */
  table?: PriceTable;
}

/** A cloud vendor prefix in front of a model id (Bedrock: `anthropic.claude-...`, `us.anthropic.claude-...`). */
const vendorPrefix = /^(?:(?:us|eu|apac|global)\.)?(?:anthropic|meta|mistral|amazon|cohere|deepseek|openai)\./;

/**
 * Version suffixes stripped one at a time, in this order, each time the name still ends with one: a Vertex
 * `@20241022`, a Bedrock `-v1:0`, `-latest`, OpenAI dates `-2024-08-06`, Anthropic dates `-20250514`, Mistral and
 * xAI `-2411` / `-0709`, Gemini `-001`.
 */
const versionSuffixes = [/@[\w.-]+$/, /-v\d+:\d+$/, /-latest$/, /-\d{4}-\d{2}-\d{2}$/, /-\d{8}$/, /-\d{4}$/, /-0\d\d$/];

/**
 * The names a model id is looked up under, most specific first: the id itself (lower case), then without routing
 * prefixes (`openrouter/openai/gpt-4o` -> `openai/gpt-4o` -> `gpt-4o`), without a cloud vendor prefix, and with
 * version suffixes stripped one by one (`gpt-4o-2024-08-06` -> `gpt-4o`). An exact entry (`gpt-4o-2024-05-13`, priced
 * apart) therefore wins over its family. There is no prefix matching: `gpt-4o-audio-preview` is unknown rather than
 * priced as `gpt-4o`.
 */
export function normalisedModelNames(model: string): string[] {
  let name = model.trim().toLowerCase();
  const names = [name];
  const add = (next: string) => {
    if (next !== name && next.length > 0) {
      name = next;
      names.push(name);
    }
  };
  for (let slash = name.indexOf('/'); slash >= 0; slash = name.indexOf('/')) add(name.slice(slash + 1));
  add(name.replace(vendorPrefix, ''));
  for (let stripped = true; stripped;) {
    stripped = false;
    for (const suffix of versionSuffixes) {
      const next = name.replace(suffix, '');
      if (next !== name && next.length > 0) {
        add(next);
        stripped = true;
        break;
      }
    }
  }
  return names;
}

/**
 * Finds the price of an upstream model: a deployment override merged over the bundled entry (tried as
 * `<provider>/<name>` then `<name>` for each of {@link normalisedModelNames}). Undefined when neither knows the model;
 * the caller then records cost 0 and flags the model (see {@link usageCost}).
 *
 * @example
 * ```ts
 * lookupPrice('openai/gpt-4o-2024-08-06', { table: bundledPriceTable }); // { price: { inputPerMillion: 2.5, ... }, source: 'bundled', matchedName: 'gpt-4o' }
 * lookupPrice('my-finetune', { override: { inputPerMillion: 3, outputPerMillion: 12 } }); // source: 'override'
 * ```
 */
export function lookupPrice(model: string, options: PriceLookupOptions = {}): PriceMatch | undefined {
  const bundled = findInTable(model, options.table ?? {}, options.provider?.toLowerCase());
  const override = options.override;
  if (override !== undefined && Object.keys(override).length > 0) {
    const base: ModelPrice = bundled?.price ?? { inputPerMillion: 0, outputPerMillion: 0 };
    const merged = { ...base };
    for (const [field, rate] of Object.entries(override) as [keyof ModelPrice, number | undefined][]) {
      if (rate !== undefined) merged[field] = rate;
    }
    return { price: merged, source: 'override', matchedName: bundled?.matchedName ?? null };
  }
  return bundled === undefined
    ? undefined
    : { price: bundled.price, source: 'bundled', matchedName: bundled.matchedName };
}

function findInTable(
  model: string,
  table: PriceTable,
  provider: string | undefined,
): { price: ModelPrice; matchedName: string } | undefined {
  for (const name of normalisedModelNames(model)) {
    if (provider !== undefined) {
      const qualified = `${provider}/${name}`;
      const price = Object.hasOwn(table, qualified) ? table[qualified] : undefined;
      if (price !== undefined) return { price, matchedName: qualified };
    }
    const price = Object.hasOwn(table, name) ? table[name] : undefined;
    if (price !== undefined) return { price, matchedName: name };
  }
  return undefined;
}
