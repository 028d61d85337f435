import * as z from 'zod/mini';
import { GatewayError } from '../../src/errors.ts';
import type { AccessToken } from './access-token-cache.ts';

/** One OAuth 2.0 token request (RFC 6749 §4.4 client credentials, RFC 7523 JWT bearer ...). */
export interface TokenEndpointRequest {
  /** The token URL, e.g. `https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token`. */
  url: string;
  /** The form fields, sent as `application/x-www-form-urlencoded` (`grant_type`, `client_id`, `scope` ...). */
  form: Readonly<Record<string, string>>;
  /** The provider id failures carry (`azure-openai`, `vertex-ai`). */
  provider: string;
  /** The token service's name in messages (`Microsoft Entra ID`, `Google OAuth`). */
  label: string;
  /**
   * Values that must never appear in an error message (the client secret, a signed assertion): any form field named
   * `client_secret`, `assertion` or `client_assertion` is hidden without being listed here.
   */
  secrets?: readonly string[];
  /** Abort the request after this long (default {@link tokenEndpointTimeoutMs}). */
  timeoutMs?: number;
  /** Clock (default Date.now), for tests: `expiresAt` is `now() + expires_in` seconds. */
  now?: () => number;
  /** The fetch to use (default the global one), for tests. */
  fetch?: typeof fetch;
}

/** Default time a token request may take before it fails as a 502. */
export const tokenEndpointTimeoutMs = 10_000;

/** The fields read from a successful token answer; `expires_in` is a number, or a numeric string (Entra's v1 endpoint). */
const tokenResponseSchema = z.object({
  access_token: z.string().check(z.minLength(1)),
  expires_in: z.union([z.number(), z.string()]),
  token_type: z.optional(z.string()),
});

/** An OAuth error answer (RFC 6749 §5.2). */
const tokenErrorSchema = z.object({
  error: z.optional(z.string()),
  error_description: z.optional(z.string()),
});

/** Form fields that hold secrets whatever the caller lists. */
const secretFieldNames = ['client_secret', 'assertion', 'client_assertion', 'password', 'refresh_token'];

/** Error descriptions are cut to this many characters: they reach the client. */
const longestDescription = 500;

function hideSecrets(text: string, secrets: readonly string[]): string {
  let hidden = text;
  for (const secret of secrets) {
    if (secret.length >= 4) hidden = hidden.split(secret).join('[redacted]');
  }
  return hidden;
}

function authenticationFailure(
  request: TokenEndpointRequest,
  secrets: readonly string[],
  detail: string,
  extra: { upstreamStatus?: number; upstreamBody?: unknown; cause?: unknown } = {},
): GatewayError {
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_authentication_failed',
    provider: request.provider,
    retryable: true,
    message: hideSecrets(
      `Getting an access token from ${request.label} failed: ${detail} This is a gateway configuration problem, not your API key.`,
      secrets,
    ),
    ...extra,
  });
}

/** Reads `expires_in` (seconds) as a positive number of seconds, or undefined. */
function expiresInSeconds(value: number | string): number | undefined {
  const seconds = typeof value === 'number' ? value : Number(value.trim());
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

/** A token endpoint's answer is a small JSON object; anything longer than this is refused, not buffered. */
const largestTokenResponseBytes = 64 * 1024;

/** The body's text, read until `limit` bytes; a longer body is cancelled and fails the fetch. */
async function boundedText(response: Response, limit: number): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    received += value.byteLength;
    if (received > limit) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`its answer is longer than ${limit} bytes`);
    }
    text += decoder.decode(value, { stream: true });
  }
}

/**
 * POSTs a form to an OAuth token URL and reads `{access_token, expires_in, token_type}`. Every failure (an error
 * status with the endpoint's `error`/`error_description`, a network error, a timeout, a malformed answer, a non-Bearer
 * token) is a retryable 502 GatewayError with code `upstream_authentication_failed`; the client secret and any signed
 * assertion are hidden from its message.
 *
 * @example
 * const token = await requestAccessToken({
 *   url: `https://login.microsoftonline.com/${tenantId}/oauth2/v2.0/token`,
 *   form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope },
 *   provider: 'azure-openai',
 *   label: 'Microsoft Entra ID',
 * });
 * // token: { token: 'eyJ0eXAi...', expiresAt: 1767225600000 }
 */
export async function requestAccessToken(request: TokenEndpointRequest): Promise<AccessToken> {
  const secrets = [
    ...(request.secrets ?? []),
    ...secretFieldNames.flatMap((name) => (request.form[name] === undefined ? [] : [request.form[name]])),
  ];
  const fetchImplementation = request.fetch ?? fetch;
  const now = request.now ?? Date.now;
  let response: Response;
  let text: string;
  try {
    response = await fetchImplementation(request.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(request.form).toString(),
      signal: AbortSignal.timeout(request.timeoutMs ?? tokenEndpointTimeoutMs),
    });
    text = await boundedText(response, largestTokenResponseBytes);
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    throw authenticationFailure(
      request,
      secrets,
      timedOut
        ? `the token endpoint did not answer within ${request.timeoutMs ?? tokenEndpointTimeoutMs} ms.`
        : `the token endpoint could not be reached (${error instanceof Error ? error.message : String(error)}).`,
      { cause: error },
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  if (!response.ok) {
    const parsed = tokenErrorSchema.safeParse(body);
    const error = parsed.success ? parsed.data.error : undefined;
    const description = parsed.success ? parsed.data.error_description : undefined;
    const said = [error, description?.slice(0, longestDescription)].filter((part) => part !== undefined).join(': ');
    throw authenticationFailure(request, secrets, `HTTP ${response.status}${said.length > 0 ? ` (${said})` : ''}.`, {
      upstreamStatus: response.status,
      upstreamBody: parsed.success
        ? { error, error_description: description === undefined ? undefined : hideSecrets(description, secrets) }
        : undefined,
    });
  }
  const parsed = tokenResponseSchema.safeParse(body);
  const seconds = parsed.success ? expiresInSeconds(parsed.data.expires_in) : undefined;
  if (!parsed.success || seconds === undefined) {
    throw authenticationFailure(
      request,
      secrets,
      'the token endpoint answered without a usable access_token and expires_in.',
    );
  }
  if (parsed.data.token_type !== undefined && parsed.data.token_type.toLowerCase() !== 'bearer') {
    throw authenticationFailure(
      request,
      secrets,
      `the token endpoint issued a "${parsed.data.token_type.slice(0, 40)}" token, not a Bearer token.`,
    );
  }
  return { token: parsed.data.access_token, expiresAt: now() + seconds * 1000 };
}
