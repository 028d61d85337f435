import type { Authenticator } from '../auth/authenticator.ts';
import type { ResolvedModelGroup } from '../routing/resolved-deployment.ts';
import type { DeploymentRouter } from '../routing/deployment-router.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import type { SecretRedactor } from '../security/secret-redactor.ts';
import type { GatewayServices } from '../services.ts';
import type { JsonLimits } from '../framing/json-limits.ts';
import type { UsageSanity } from '../usage/usage-sanity.ts';
import type { GatewayAccounting } from '../accounting/gateway-accounting.ts';
import type { ResponseStore } from '../responses/response-store.ts';

/** Everything route handlers need, built once by createGateway. */
export interface RouteDependencies {
  services: GatewayServices;
  authenticator: Authenticator;
  modelGroups: ReadonlyMap<string, ResolvedModelGroup>;
  /** Picks each attempt's deployment and keeps every deployment's breaker, load and latency. */
  router: DeploymentRouter;
  /** Counts each deployment's requests and tokens against its `rpm`/`tpm` (the keys' limiter when there is one). */
  capacity: RateLimiter;
  bodyLimitBytes: number;
  /** Removes the gateway's own secrets from upstream messages before a client or a log line sees them. */
  redactor: SecretRedactor;
  /** Depth and item bounds of JSON request bodies. */
  jsonLimits: JsonLimits;
  /** Unix seconds when the gateway started (the `created` of /v1/models entries). */
  startedAtSeconds: number;
  /** Validates and clamps the usage upstreams report, before anything accounts it. */
  usageSanity: UsageSanity;
  /** Limits, budgets and the usage ledger (all optional). */
  accounting: GatewayAccounting;
  /** Where the Responses API keeps responses; without one nothing is stored (`previous_response_id` is refused). */
  responseStore: ResponseStore | undefined;
  /** How long stored responses are kept, ms (default 30 days). */
  responseRetentionMs: number;
}
