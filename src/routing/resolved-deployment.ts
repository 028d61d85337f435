import type { ClientDialectId, ProviderTranslator, UpstreamTarget } from '../canonical/provider-translator.ts';
import type { UpstreamLimits } from '../upstream/upstream-limits.ts';
import type { ModelPrice } from '../usage/price-model.ts';

/** A deployment ready to call: its translator and its upstream target, resolved once at start. */
export interface ResolvedDeployment {
  /** `<group>/<index>`, stable for metrics and logs. */
  id: string;
  translator: ProviderTranslator;
  target: UpstreamTarget;
  weight: number;
  /** The upstream model's price (bundled table, config override); undefined when unknown (cost recorded as 0). */
  price: ModelPrice | undefined;
  /** Timeouts and size caps of calls to it. */
  limits: UpstreamLimits;
  /** The client dialects passed through to it untranslated (preset default or config, within the translator's). */
  nativeDialects: ReadonlySet<ClientDialectId>;
}

/** A model group ready to route: its name and deployments. */
export interface ResolvedModelGroup {
  name: string;
  deployments: ResolvedDeployment[];
  totalWeight: number;
}
