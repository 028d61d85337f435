/**
 * Regenerates the bundled price table (src/usage/price-table-generated.ts) from `@pydantic/genai-prices`, the
 * maintained catalogue Pydantic publishes (a pinned devDependency: bump it, run `pnpm prices:update`, review the diff).
 *
 * Each catalogue provider maps to how torii looks prices up (src/usage/price-lookup.ts): a model's own maker is keyed
 * by the bare model id (`gpt-4o`, `claude-sonnet-4-5`, `gemini-2.5-flash`), so every host of the same model (Azure
 * OpenAI, Vertex AI, Bedrock's Claude after its vendor prefix and version are stripped) finds it; a host that
 * resells open-weight models at its own prices is keyed `<torii provider>/<model id>` (`groq/llama-3.3-70b-versatile`,
 * `bedrock/amazon.nova-pro-v1:0`). Rates: `input_mtok`, `output_mtok`, `cache_read_mtok`, `cache_write_mtok` (US
 * dollars per million tokens); a tiered rate takes its base tier (the long-context surcharge is not modelled); of
 * prices that changed over time, the one in force today (at standard hours where it varies by time of day). OpenRouter's 700 resold models are left out (its ids,
 * `openai/gpt-4o`, fall back to the maker's bare price), as are services the catalogue does not cover (DeepInfra,
 * SambaNova, Hyperbolic, Nebius, DashScope: price them with a deployment's `pricing`).
 *
 * Usage: node scripts/price-table-generate.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { findProvider } from '@pydantic/genai-prices';

/** Catalogue provider id -> the torii provider its prices are keyed under (undefined: bare model ids, the maker's). */
const providers: Record<string, string | undefined> = {
  openai: undefined,
  anthropic: undefined,
  google: undefined,
  cohere: undefined,
  mistral: undefined,
  deepseek: undefined,
  'x-ai': undefined,
  zai: 'zai',
  zhipuai: 'zhipu',
  moonshotai: 'moonshot',
  perplexity: 'perplexity',
  groq: 'groq',
  together: 'together',
  fireworks: 'fireworks',
  novita: 'novita',
  cerebras: 'cerebras',
  minimax: undefined,
  aws: 'bedrock',
  azure: 'azure',
};

type Rate = number | { base: number } | undefined;
type MatchLogic =
  | { or: MatchLogic[] }
  | { and: MatchLogic[] }
  | { equals: string }
  | { starts_with: string }
  | { ends_with: string }
  | { contains: string }
  | { regex: string };
interface CatalogueModel {
  id: string;
  match: MatchLogic;
  deprecated?: boolean;
  prices: Record<string, Rate> | { constraint?: { start_date?: string }; prices: Record<string, Rate> }[];
}

const today = new Date().toISOString().slice(0, 10);

/** A rate as a number: a tiered rate's base tier. */
function rate(value: Rate): number | undefined {
  if (typeof value === 'number') return value;
  if (value !== undefined && typeof value === 'object' && typeof value.base === 'number') return value.base;
  return undefined;
}

/**
 * The prices in force today: of the dated entries that have started, the latest; where a price also varies by time
 * of day (DeepSeek's off-peak discount), the standard (highest) one, so budgets are never undercounted.
 */
function currentPrices(model: CatalogueModel): Record<string, Rate> | undefined {
  if (!Array.isArray(model.prices)) return model.prices;
  const started = model.prices.filter((entry) => (entry.constraint?.start_date ?? '') <= today);
  const latest = started.reduce((last, entry) => {
    const date = entry.constraint?.start_date ?? '';
    return date > last ? date : last;
  }, '');
  const current = started.filter((entry) => (entry.constraint?.start_date ?? '') === latest);
  return current
    .map((entry) => entry.prices)
    .sort((left, right) => (rate(right.input_mtok) ?? 0) - (rate(left.input_mtok) ?? 0))[0];
}

/**
 * The names a catalogue model is listed under: its id and every name its match rule spells out (`equals`, and the
 * `starts_with` prefixes, which torii's lookup reaches by stripping dated suffixes: `claude-sonnet-4-5-20250929` ->
 * `claude-sonnet-4-5`). Rules that are not lists of names (`and`, `regex`, `contains`) add none.
 */
function namesOf(model: CatalogueModel): string[] {
  const names = [model.id];
  const walk = (rule: MatchLogic) => {
    if ('or' in rule) rule.or.forEach(walk);
    else if ('equals' in rule) names.push(rule.equals);
    else if ('starts_with' in rule && !/[-.@:/]$/.test(rule.starts_with)) names.push(rule.starts_with);
  };
  walk(model.match);
  return [...new Set(names.map((name) => name.toLowerCase()))];
}

const round = (value: number) => Math.round(value * 1e6) / 1e6;

const entries: [string, string][] = [];
const counts: Record<string, number> = {};
for (const [catalogueId, keyPrefix] of Object.entries(providers)) {
  const provider = findProvider({ providerId: catalogueId });
  if (provider === undefined) throw new Error(`@pydantic/genai-prices has no provider ${catalogueId}`);
  counts[catalogueId] = 0;
  for (const model of provider.models as CatalogueModel[]) {
    const prices = currentPrices(model);
    const input = rate(prices?.input_mtok);
    if (prices === undefined || input === undefined) continue;
    const cached = rate(prices.cache_read_mtok);
    const cacheWrite = rate(prices.cache_write_mtok);
    const rates = [input, rate(prices.output_mtok) ?? 0, cached, cacheWrite].map((value) =>
      value === undefined ? 'undefined' : String(round(value)),
    );
    while (rates.at(-1) === 'undefined') rates.pop();
    const call = `price(${rates.join(', ')})`;
    for (const name of namesOf(model)) entries.push([`${keyPrefix === undefined ? '' : `${keyPrefix}/`}${name}`, call]);
    counts[catalogueId]++;
  }
}

// The first entry of a key wins: a model's own id before another model's alias, a maker before a reseller.
const seen = new Set<string>();
const lines = entries
  .filter(([key]) => !seen.has(key) && seen.add(key) !== undefined)
  .map(([key, value]) => `  ${JSON.stringify(key)}: ${value},`);

// The catalogue's own version, read from the installed package (its exports do not include package.json).
const packageJson = new URL('../node_modules/@pydantic/genai-prices/package.json', import.meta.url);
const version = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;
const output = `import type { ModelPrice, PriceTable } from './price-model.ts';

/**
 * Generated by scripts/price-table-generate.ts from @pydantic/genai-prices ${version} on ${today}: do not edit by
 * hand (a deployment's \`pricing\` corrects one deployment; src/usage/price-table.ts corrects the bundle). US dollars
 * per million tokens. ${lines.length} models: ${Object.entries(counts)
   .map(([id, count]) => `${id} ${count}`)
   .join(', ')}.
 */
export const generatedPriceTable: PriceTable = {
${lines.join('\n')}
};

/** One model's rates: input, output, and the cache-read and cache-write rates where the catalogue has them. */
function price(input: number, output: number, cachedInput?: number, cacheWriteInput?: number): ModelPrice {
  return {
    inputPerMillion: input,
    outputPerMillion: output,
    ...(cachedInput === undefined ? {} : { cachedInputPerMillion: cachedInput }),
    ...(cacheWriteInput === undefined ? {} : { cacheWriteInputPerMillion: cacheWriteInput }),
  };
}
`;
writeFileSync(new URL('../src/usage/price-table-generated.ts', import.meta.url), output);
console.log(`wrote ${lines.length} prices (${output.length} bytes) to src/usage/price-table-generated.ts`);
