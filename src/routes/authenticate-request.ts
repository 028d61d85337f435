import type { AuthContext } from '../auth/authenticator.ts';
import { presentedSecret } from '../auth/presented-secret.ts';
import type { RouteDependencies } from './gateway-context.ts';

/** Authenticates a request with the gateway's authenticator; throws the 401 GatewayError on failure. */
export function authenticateRequest(
  dependencies: RouteDependencies,
  request: Request,
): AuthContext | Promise<AuthContext> {
  return dependencies.authenticator.authenticate(presentedSecret(request.headers));
}
