import type { IncomingMessage, ServerResponse } from 'node:http';
import { mockUpstreamApiKey } from './mock-upstream-routes.ts';

/** One token request the mock's OAuth endpoints answered. */
export interface TokenRequest {
  path: string;
  /** The form fields (`grant_type`, `assertion`, `client_id`, `client_secret`, `scope`). */
  form: Record<string, string>;
}

/** The token lifetime the mock grants, in seconds. */
export const mockTokenLifetimeSeconds = 3600;

/** Google's token URI (`/token`, as a service account's `token_uri` names it) and Entra's `/{tenant}/oauth2/v2.0/token`. */
export function isTokenRequest(url: string): boolean {
  const path = url.split('?')[0] ?? '';
  return path === '/token' || /^\/[^/]+\/oauth2\/v2\.0\/token$/.test(path);
}

function sendToken(response: ServerResponse, status: number, body: Record<string, unknown>): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/** The claims of a JWT, without checking its signature (the test checks it with the service account's public key). */
function jwtClaims(assertion: string): Record<string, unknown> | undefined {
  const [header, claims, signature] = assertion.split('.');
  if (header === undefined || claims === undefined || signature === undefined || signature.length === 0)
    return undefined;
  try {
    const decodedHeader = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: string };
    if (decodedHeader.alg !== 'RS256') return undefined;
    return JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * Answers a token request as Google's and Microsoft's token endpoints do: the JWT bearer grant with an RS256 assertion
 * whose claims name the cloud-platform scope and this endpoint as audience, or client credentials with a secret; the
 * granted token is the mock's upstream key, so the provider calls that follow are authorised. Anything else gets the
 * OAuth error body (`{error, error_description}`) with a 400 or 401.
 */
export function answerTokenRequest(
  request: IncomingMessage,
  text: string,
  response: ServerResponse,
  state: { tokenRequests: TokenRequest[] },
): void {
  const path = (request.url ?? '/').split('?')[0] ?? '';
  const form = Object.fromEntries(new URLSearchParams(text));
  state.tokenRequests.push({ path, form });
  const granted = { access_token: mockUpstreamApiKey, token_type: 'Bearer', expires_in: mockTokenLifetimeSeconds };
  if (form.grant_type === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
    const claims = jwtClaims(form.assertion ?? '');
    const now = Math.floor(Date.now() / 1000);
    const valid =
      claims !== undefined &&
      typeof claims.iss === 'string' &&
      typeof claims.aud === 'string' &&
      claims.aud.endsWith('/token') &&
      String(claims.scope).includes('https://www.googleapis.com/auth/cloud-platform') &&
      typeof claims.exp === 'number' &&
      claims.exp > now;
    if (!valid) {
      sendToken(response, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
      return;
    }
    sendToken(response, 200, granted);
    return;
  }
  if (form.grant_type === 'client_credentials') {
    if (form.client_secret !== 'mock-client-secret' || form.scope !== 'https://cognitiveservices.azure.com/.default') {
      sendToken(response, 401, {
        error: 'invalid_client',
        error_description: 'AADSTS7000215: Invalid client secret provided.',
      });
      return;
    }
    sendToken(response, 200, granted);
    return;
  }
  sendToken(response, 400, { error: 'unsupported_grant_type', error_description: `mock: grant ${form.grant_type}` });
}
