import { GatewayError, type GatewayErrorType } from '../errors.ts';

/** What the gateway answers for one upstream HTTP status. */
export interface UpstreamStatusRule {
  status: number;
  type: GatewayErrorType;
  /** The error code the client sees when the upstream body names none (or always, with `replaceCode`). */
  code?: string;
  /** Whether this rule's code wins over the upstream's own code (authentication failures, missing models). */
  replaceCode?: boolean;
  retryable: boolean;
}

/**
 * A property path into a parsed error body, dotted (`error.message`, `errors.0.detail`). Each field of
 * {@link UpstreamErrorMapping.fields} lists paths in order; the first that holds a value wins.
 */
export type ErrorBodyPath = string;

/**
 * One provider's error mapping, declared: where its error bodies keep the message, type, code and parameter; which
 * statuses it answers differently from the shared table; and, for errors sent inside a stream (no HTTP status), which
 * of its error types or status names stand for which status.
 *
 * @example
 * const mapGeminiError = createUpstreamErrorMapper({
 *   provider: 'gemini',
 *   label: 'Gemini',
 *   fields: { message: ['error.message'], code: ['error.status'] },
 *   statusByType: { RESOURCE_EXHAUSTED: 429, INVALID_ARGUMENT: 400 },
 * });
 * mapGeminiError.map(429, body, headers); // GatewayError { status: 429, type: 'rate_limit_error', retryable: true }
 */
export interface UpstreamErrorMapping {
  /** The provider id errors carry (`gemini`, `bedrock`). */
  provider: string;
  /** The provider's name in messages the gateway writes itself (`Gemini`). */
  label: string;
  /** Where the body's fields are. `message` is required; the others are optional. */
  fields: {
    message: readonly ErrorBodyPath[];
    type?: readonly ErrorBodyPath[];
    code?: readonly ErrorBodyPath[];
    param?: readonly ErrorBodyPath[];
  };
  /** Statuses this provider answers differently from {@link defaultUpstreamStatusRules}. */
  statuses?: Readonly<Record<number, UpstreamStatusRule>>;
  /**
   * The HTTP status an upstream error type or code stands for (Bedrock's `ThrottlingException`, Gemini's
   * `RESOURCE_EXHAUSTED`), read from `type` or `code`: used for errors sent inside a stream, and for a body whose
   * type says more than its status (a 400 carrying `RESOURCE_EXHAUSTED` is answered as a 429).
   */
  statusByType?: Readonly<Record<string, number>>;
  /**
   * Answers chosen by the body's error type or code rather than its status (OpenAI's `insufficient_quota` on a 429,
   * Azure's `content_filter` on a 400): checked before the status table.
   */
  rulesByType?: Readonly<Record<string, UpstreamStatusRule>>;
  /** Response headers passed on to the client; default `retry-after` and `retry-after-ms`. */
  passedHeaders?: readonly string[];
}

/** Maps one provider's upstream errors, built by {@link createUpstreamErrorMapper}. */
export interface UpstreamErrorMapper {
  /** An upstream HTTP error answer (the translator's `mapError`). `body` is parsed JSON, or the text of a non-JSON body. */
  map(status: number, body: unknown, headers: Headers): GatewayError;
  /**
   * An error sent inside a successful answer (a stream's error event): its status comes from `statusByType`, a
   * numeric code in the HTTP range, or else 500.
   */
  mapInBand(body: unknown): GatewayError;
}

const invalid = (status: number): UpstreamStatusRule => ({ status, type: 'invalid_request_error', retryable: false });
const upstreamAuthentication: UpstreamStatusRule = {
  status: 502,
  type: 'upstream_error',
  code: 'upstream_authentication_failed',
  replaceCode: true,
  retryable: true,
};

/**
 * The shared status table. The client's own mistakes keep their status. A 401/403 means the gateway's upstream
 * credential is wrong, not the client's key: a 502 another deployment may not share (retryable). A 404 is almost
 * always the configured upstream model name: a 502 `upstream_model_not_found` (the client's model group exists).
 * A 402 (out of credits) is answered like OpenAI's `insufficient_quota`; 529 (overloaded) as a 503. Unlisted 5xx are
 * retryable 502s, other unlisted statuses non-retryable 502s (with the upstream's own code, if any).
 */
export const defaultUpstreamStatusRules: Readonly<Record<number, UpstreamStatusRule>> = {
  400: invalid(400),
  401: upstreamAuthentication,
  402: { status: 429, type: 'insufficient_quota', code: 'insufficient_quota', retryable: true },
  403: upstreamAuthentication,
  404: { status: 502, type: 'upstream_error', code: 'upstream_model_not_found', replaceCode: true, retryable: true },
  408: { status: 504, type: 'timeout_error', code: 'upstream_timeout', retryable: true },
  409: invalid(409),
  413: { status: 413, type: 'invalid_request_error', code: 'request_too_large', retryable: false },
  422: invalid(422),
  424: { status: 502, type: 'upstream_error', code: 'upstream_model_error', retryable: true },
  429: { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', retryable: true },
  500: { status: 502, type: 'upstream_error', code: 'upstream_server_error', retryable: true },
  503: { status: 503, type: 'upstream_error', code: 'upstream_unavailable', retryable: true },
  504: { status: 504, type: 'timeout_error', code: 'upstream_timeout', retryable: true },
  529: { status: 503, type: 'upstream_error', code: 'upstream_overloaded', retryable: true },
};

/** Text bodies (a proxy's HTML page, a plain-text 502) are cut to this many characters: the message reaches the client. */
const longestTextMessage = 2000;

/** Reads a dotted path from a parsed body; undefined when any step is missing. */
function valueAt(body: unknown, path: ErrorBodyPath): unknown {
  let value = body;
  for (const step of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[step];
  }
  return value;
}

/** The first path that holds a string (or, when `numbers`, a number as text); objects are not messages. */
function textAt(body: unknown, paths: readonly ErrorBodyPath[] | undefined, numbers = false): string | undefined {
  for (const path of paths ?? []) {
    const value = valueAt(body, path);
    if (typeof value === 'string' && value.trim().length > 0) return value;
    if (numbers && typeof value === 'number' && Number.isFinite(value)) return String(value);
  }
  return undefined;
}

/** Hides key material upstreams echo in authentication errors (`sk-proj-****1234`, `AKIA...`): the client must not see it. */
function redactEchoedKeys(message: string): string {
  return message.replace(
    /\S*\*{4,}\S*|\b(?:sk|gsk|xai|fw)-[\w-]{8,}|\bAIza[\w-]{20,}|\b(?:AKIA|ASIA)[A-Z0-9]{12,}/g,
    '[redacted]',
  );
}

/**
 * Builds a provider's error mapper from its declaration: the upstream's message, type, code and parameter kept,
 * statuses answered by the provider's table over the shared one, `retry-after` passed on when retrying can help,
 * credentials the upstream echoes in an authentication error hidden.
 */
export function createUpstreamErrorMapper(mapping: UpstreamErrorMapping): UpstreamErrorMapper {
  const statuses = { ...defaultUpstreamStatusRules, ...mapping.statuses };
  const passedHeaders = mapping.passedHeaders ?? ['retry-after', 'retry-after-ms'];
  const statusOfType = (type: string | undefined, code: string | undefined): number | undefined =>
    (type === undefined ? undefined : mapping.statusByType?.[type]) ??
    (code === undefined ? undefined : mapping.statusByType?.[code]);

  function map(status: number, body: unknown, headers: Headers): GatewayError {
    const text = typeof body === 'string' ? body.trim().slice(0, longestTextMessage) || undefined : undefined;
    const message = text ?? textAt(body, mapping.fields.message);
    const type = textAt(body, mapping.fields.type);
    const code = textAt(body, mapping.fields.code, true);
    const param = textAt(body, mapping.fields.param);
    // A body's type can say more than its status (a 400 carrying a quota error); only 4xx are re-read this way.
    const typedStatus = status >= 400 && status < 500 ? statusOfType(type, code) : undefined;
    const typedRule =
      (type === undefined ? undefined : mapping.rulesByType?.[type]) ??
      (code === undefined ? undefined : mapping.rulesByType?.[code]);
    const rule = typedRule ??
      statuses[typedStatus ?? status] ?? {
        status: 502,
        type: 'upstream_error',
        code: 'upstream_error',
        retryable: status >= 500,
      };
    const authentication = rule.code === upstreamAuthentication.code;
    const upstreamMessage = message ?? `${mapping.label} returned HTTP ${status}.`;
    const responseHeaders: Record<string, string> = {};
    if (rule.retryable) {
      for (const name of passedHeaders) {
        const value = headers.get(name);
        if (value !== null) responseHeaders[name] = value;
      }
    }
    return new GatewayError({
      status: rule.status,
      type: rule.type,
      code: rule.replaceCode === true ? (rule.code ?? null) : (code ?? rule.code ?? null),
      param: param ?? null,
      message: authentication
        ? `${mapping.label} rejected the gateway's credentials (HTTP ${status}); this is a gateway configuration problem, not your API key. ${mapping.label} said: ${redactEchoedKeys(upstreamMessage)}`
        : upstreamMessage,
      provider: mapping.provider,
      retryable: rule.retryable,
      upstreamStatus: status,
      upstreamBody: body,
      ...(Object.keys(responseHeaders).length > 0 ? { headers: responseHeaders } : {}),
    });
  }

  function mapInBand(body: unknown): GatewayError {
    const type = textAt(body, mapping.fields.type);
    const code = textAt(body, mapping.fields.code, true);
    const numericCode = code === undefined ? undefined : Number(code);
    const status =
      statusOfType(type, code) ??
      (numericCode !== undefined && Number.isInteger(numericCode) && numericCode >= 400 && numericCode <= 599
        ? numericCode
        : 500);
    return map(status, body, new Headers());
  }

  return { map, mapInBand };
}
