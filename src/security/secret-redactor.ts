import type { GatewayConfig } from '../config/config-schema.ts';
import { GatewayError } from '../errors.ts';

/** What replaces a secret in anything a client or a log line can see. */
export const redactedMarker = '[redacted]';

/**
 * Secrets shorter than this are not redacted: a 3-character "key" would blank out ordinary words. Real provider keys
 * and passwords are far longer.
 */
const shortestRedactedSecret = 6;

/**
 * Removes the gateway's own secrets (provider API keys, credentials in base URLs and headers, database and cache
 * passwords, the master key) from text on its way to a client or a log line.
 */
export interface SecretRedactor {
  /** `text` with every known secret (and its URL-encoded form) replaced by `[redacted]`. */
  redact(text: string): string;
}

/** A redactor that knows no secrets. */
export const noSecretRedactor: SecretRedactor = { redact: (text) => text };

/**
 * Builds the redactor over a set of secrets. Longer secrets are replaced first, so a secret that contains another is
 * removed whole. Cost: one substring search per secret, and only on error paths and log lines.
 *
 * @example
 * const redactor = createSecretRedactor([...secretsOfConfig(config), process.env.TORII_MASTER_KEY ?? '']);
 * redactor.redact('Invalid API key: sk-live-123456'); // 'Invalid API key: [redacted]'
 */
export function createSecretRedactor(secrets: Iterable<string>): SecretRedactor {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < shortestRedactedSecret) continue;
    forms.add(secret);
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) forms.add(encoded);
  }
  if (forms.size === 0) return noSecretRedactor;
  const ordered = [...forms].sort((left, right) => right.length - left.length);
  return {
    redact(text) {
      let result = text;
      for (const secret of ordered) if (result.includes(secret)) result = result.replaceAll(secret, redactedMarker);
      return result;
    },
  };
}

const sensitiveName = /auth|key|token|secret|password|cookie|sig|credential/i;

/**
 * The credentials a URL carries: its user name and password, and the values of query parameters whose names look
 * like credentials (`key`, `token`, `sig`, ...).
 */
export function secretsOfUrl(text: string): string[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [];
  }
  const secrets: string[] = [];
  if (url.password !== '') secrets.push(url.password, decodeURIComponent(url.password));
  if (url.username !== '') secrets.push(url.username, decodeURIComponent(url.username));
  for (const [name, value] of url.searchParams) if (sensitiveName.test(name)) secrets.push(value);
  return secrets;
}

/**
 * Every secret a gateway config holds: each deployment's API key, the values of its headers whose names look like
 * credentials (`authorization`, `api-key`, `x-goog-api-key`, ...), and the credentials in its base URL.
 */
export function secretsOfConfig(config: GatewayConfig): string[] {
  const secrets: string[] = [];
  for (const group of Object.values(config.modelGroups)) {
    for (const deployment of group.deployments) {
      if (deployment.apiKey !== undefined) secrets.push(deployment.apiKey);
      for (const [name, value] of Object.entries(deployment.headers ?? {}))
        if (sensitiveName.test(name)) secrets.push(value.replace(/^(Bearer|Basic)\s+/i, ''), value);
      if (deployment.baseURL !== undefined) secrets.push(...secretsOfUrl(deployment.baseURL));
      secrets.push(...secretsOfOptions(deployment.options));
    }
  }
  return secrets;
}

/**
 * The credentials in a deployment's provider options: every string under a name that looks like one (Bedrock's
 * `secretAccessKey` and `sessionToken`, Azure's `clientSecret`, a Vertex service account's `private_key`), however
 * deeply nested, and a service account given as JSON text.
 */
function secretsOfOptions(options: unknown, sensitive = false, depth = 0): string[] {
  if (depth > 8) return [];
  if (typeof options === 'string') {
    if (sensitive) return [options];
    // A service account pasted as JSON text: its private key is a secret too.
    if (options.trimStart().startsWith('{') && options.includes('private_key')) {
      try {
        return secretsOfOptions(JSON.parse(options) as unknown, false, depth + 1);
      } catch {
        return [];
      }
    }
    return [];
  }
  if (typeof options !== 'object' || options === null) return [];
  const secrets: string[] = [];
  for (const [name, value] of Object.entries(options))
    secrets.push(...secretsOfOptions(value, sensitive || sensitiveName.test(name), depth + 1));
  return secrets;
}

/** The same error with its message redacted; the error itself when its message holds no secret. */
export function redactedError(error: GatewayError, redactor: SecretRedactor): GatewayError {
  const message = redactor.redact(error.message);
  if (message === error.message) return error;
  return new GatewayError({
    status: error.status,
    type: error.type,
    code: error.code,
    param: error.param,
    ...(error.provider === undefined ? {} : { provider: error.provider }),
    retryable: error.retryable,
    message,
    cause: error.cause,
    ...(error.headers ? { headers: error.headers } : {}),
  });
}
