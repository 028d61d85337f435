import type { Authenticator } from '../auth/authenticator.ts';
import { presentedSecret } from '../auth/presented-secret.ts';
import { GatewayError } from '../errors.ts';
import type { ResolvedModelGroup } from '../routing/resolved-deployment.ts';
import type { JsonLimits } from '../framing/json-limits.ts';

/** What the admin routes need from the gateway. */
export interface AdminDependencies {
  authenticator: Authenticator;
  modelGroups: ReadonlyMap<string, ResolvedModelGroup>;
  bodyLimitBytes: number;
  /** Depth and item bounds of JSON request bodies (default: defaultJsonLimits). */
  jsonLimits?: JsonLimits;
  /** Wall clock, epoch ms. */
  now: () => number;
}

/** Authenticates the request and refuses (403) anyone but the master key. */
export async function requireMaster(dependencies: AdminDependencies, request: Request): Promise<void> {
  const caller = await dependencies.authenticator.authenticate(presentedSecret(request.headers));
  if (caller.kind !== 'master')
    throw new GatewayError({
      status: 403,
      type: 'permission_error',
      code: 'admin_only',
      message: 'The admin API requires the master key.',
    });
}
