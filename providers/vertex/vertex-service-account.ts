import * as z from 'zod/mini';

/** Google's OAuth token URL, used when a service-account key names none (every key Google issues names this one). */
export const defaultGoogleTokenUri = 'https://oauth2.googleapis.com/token';

/** The fields of a Google service-account key the gateway uses to sign its own access tokens. */
export interface VertexServiceAccount {
  clientEmail: string;
  /** The PKCS#8 private key, PEM (`-----BEGIN PRIVATE KEY-----`). Never put it in a message. */
  privateKey: string;
  /** The key's id, sent as the JWT's `kid` so Google picks the right public key. */
  privateKeyId: string | undefined;
  tokenUri: string;
}

/** A service-account key as Google's console downloads it: only the fields read, the others ignored. */
const serviceAccountKeySchema = z.object({
  type: z.optional(z.string()),
  client_email: z.string().check(z.minLength(1)),
  private_key: z.string().check(z.minLength(1)),
  private_key_id: z.optional(z.string()),
  token_uri: z.optional(z.url({ protocol: /^https?$/ })),
});

/** The outcome of {@link parseServiceAccount}: the account, or a problem that names fields but never key material. */
export type ServiceAccountParse = { ok: true; account: VertexServiceAccount } | { ok: false; problem: string };

const pemHeader = '-----BEGIN PRIVATE KEY-----';
const pemFooter = '-----END PRIVATE KEY-----';

/**
 * Reads a service-account key given as its parsed JSON object or its JSON text. The problem it reports names the
 * missing or wrong fields only: the private key is never quoted (not even in part).
 *
 * @example
 * const parsed = parseServiceAccount(readFileText('key.json'));
 * if (parsed.ok) parsed.account.clientEmail; // 'gateway@my-project.iam.gserviceaccount.com'
 */
export function parseServiceAccount(value: unknown): ServiceAccountParse {
  let json: unknown = value;
  if (typeof value === 'string') {
    try {
      json = JSON.parse(value);
    } catch {
      return { ok: false, problem: "is not valid JSON (give the key file's JSON object or its text)" };
    }
  }
  const parsed = serviceAccountKeySchema.safeParse(json);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join('.') || '(key)'))].join(', ');
    return { ok: false, problem: `is not a service-account key: missing or invalid ${fields}` };
  }
  const key = parsed.data;
  if (key.type !== undefined && key.type !== 'service_account') {
    return { ok: false, problem: `has type "${key.type.slice(0, 40)}", expected "service_account"` };
  }
  if (pkcs8FromPem(key.private_key) === undefined) {
    return {
      ok: false,
      problem: `private_key is not a PKCS#8 PEM key (${pemHeader} ... ${pemFooter}, as in Google's key files)`,
    };
  }
  return {
    ok: true,
    account: {
      clientEmail: key.client_email,
      privateKey: key.private_key,
      privateKeyId: key.private_key_id,
      tokenUri: key.token_uri ?? defaultGoogleTokenUri,
    },
  };
}

/**
 * The DER bytes of a PKCS#8 PEM private key (the base64 between its header and footer; `\n` escapes left by a key
 * pasted into an environment variable are accepted), or undefined when it is not one.
 */
export function pkcs8FromPem(pem: string): Uint8Array<ArrayBuffer> | undefined {
  const text = pem.replace(/\\n/g, '\n').trim();
  if (!text.startsWith(pemHeader) || !text.endsWith(pemFooter)) return undefined;
  const base64 = text.slice(pemHeader.length, text.length - pemFooter.length).replace(/\s+/g, '');
  if (base64.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return undefined;
  let binary: string;
  try {
    binary = atob(base64);
  } catch {
    return undefined;
  }
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}
