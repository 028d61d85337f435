import type { AuthContext } from '../auth/authenticator.ts';
import { presentedSecret } from '../auth/presented-secret.ts';
import type { HeaderReader } from './model-request-source.ts';
import type { RouteDependencies } from './gateway-context.ts';
import type { RequestRecord } from './request-record.ts';

/**
 * Authenticates a request with the gateway's authenticator and notes the caller on the record; throws the 401
 * GatewayError on failure.
 */
export function authenticateRequest(
  dependencies: Pick<RouteDependencies, 'authenticator'>,
  request: { headers: HeaderReader },
  record: RequestRecord,
): AuthContext | Promise<AuthContext> {
  const auth = dependencies.authenticator.authenticate(presentedSecret(request.headers));
  if (auth instanceof Promise)
    return auth.then((caller) => {
      record.auth = caller;
      return caller;
    });
  record.auth = auth;
  return auth;
}
