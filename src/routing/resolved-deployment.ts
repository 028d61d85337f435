import type { ClientDialectId, ProviderTranslator, UpstreamTarget } from '../canonical/provider-translator.ts';
import type { RoutingStrategyName } from '../config/config-schema.ts';
import type { UpstreamLimits } from '../upstream/upstream-limits.ts';
import type { ModelPrice } from '../usage/price-model.ts';
import type { CooldownPolicy, RetryPolicy } from './routing-policy.ts';

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
  /** Retries after a failure of this deployment (its own over its group's). */
  retry: RetryPolicy;
  /** Its tier under the `priority` strategy, lower first. */
  priority: number;
  /** The provider account's capacity: requests and tokens per minute; undefined is unbounded. */
  capacity: { rpm: number | undefined; tpm: number | undefined };
}

/** A model group ready to route: its name, deployments and routing policy. */
export interface ResolvedModelGroup {
  name: string;
  deployments: ResolvedDeployment[];
  totalWeight: number;
  strategy: RoutingStrategyName;
  /** The group's retries (deployments may override theirs). */
  retry: RetryPolicy;
  /** The circuit breaker of each of its deployments. */
  cooldown: CooldownPolicy;
  /** Background health checks of its deployments; undefined: none. */
  healthCheck: { intervalMs: number; timeoutMs: number } | undefined;
  /** Groups tried in order once this one is exhausted. */
  fallbacks: readonly string[];
  /** Groups tried when a deployment says the prompt is too long for it. */
  contextWindowFallbacks: readonly string[];
  /** Groups tried when a deployment refuses the request under its content policy. */
  contentPolicyFallbacks: readonly string[];
}
