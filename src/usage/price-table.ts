import type { PriceTable } from './price-model.ts';
import { generatedPriceTable } from './price-table-generated.ts';

/**
 * The bundled price table: generated from the maintained catalogue `@pydantic/genai-prices` (a pinned
 * devDependency; `pnpm prices:update` refreshes price-table-generated.ts, see scripts/price-table-generate.ts). Keys
 * are normalised names (see `normalisedModelNames` in price-lookup.ts): lower case, no provider prefix, no dated
 * suffix; an entry keyed `<provider>/<model>` applies only to that config provider (the same open-weight model costs
 * differently per host).
 *
 * Not modelled: long-context surcharges (a tiered price counts at its base tier), 1-hour Anthropic cache writes (2x
 * input), audio and image tokens. A deployment's `pricing` override corrects any of these for one deployment, and
 * prices models the catalogue does not list.
 *
 * Adapters pass this table to the gateway (`priceTable`); the Worker imports this module on demand, so its ~50 KB
 * stay out of the Worker's start-up bundle.
 */
export const bundledPriceTable: PriceTable = generatedPriceTable;
