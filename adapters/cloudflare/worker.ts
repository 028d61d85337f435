import type { Hono } from 'hono';
import { builtinProviders } from '../../providers/index.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { GatewayError, renderError } from '../../src/errors.ts';
import { parseJson } from '../../src/framing/parse-json.ts';
import { createGateway } from '../../src/gateway.ts';
import { createFetchUpstream } from '../../src/routes/fetch-upstream.ts';
import type { GatewayEnvironment } from '../../src/routes/gateway-context.ts';

/**
 * The Worker's bindings. `TORII_CONFIG` is the gateway config as an object (a `[vars]` table in wrangler.toml) or a
 * JSON string (a secret or `--var`); provider keys are secrets referenced from it as `${OPENAI_API_KEY}`.
 */
export interface WorkerEnvironment {
  TORII_CONFIG?: unknown;
  TORII_MASTER_KEY?: string;
  [name: string]: unknown;
}

/** The part of the Workers ExecutionContext the gateway uses. */
export interface WorkerExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
}

let cached: { environment: WorkerEnvironment; app: Hono<GatewayEnvironment> } | undefined;

function stringValues(environment: WorkerEnvironment): Record<string, string | undefined> {
  const values: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(environment)) if (typeof value === 'string') values[name] = value;
  return values;
}

function buildGateway(environment: WorkerEnvironment): Hono<GatewayEnvironment> {
  if (typeof environment.TORII_MASTER_KEY !== 'string' || environment.TORII_MASTER_KEY === '') {
    throw new ConfigError(['TORII_MASTER_KEY: not set; add it with `wrangler secret put TORII_MASTER_KEY`']);
  }
  let raw: unknown = environment.TORII_CONFIG ?? { modelGroups: {} };
  if (typeof raw === 'string') {
    const parsed = parseJson(raw);
    if (!parsed.ok) throw new ConfigError([`TORII_CONFIG: not valid JSON (${parsed.error})`]);
    raw = parsed.value;
  }
  return createGateway({
    config: parseGatewayConfig(raw, stringValues(environment)),
    providers: builtinProviders,
    authenticator: createMasterKeyAuthenticator(environment.TORII_MASTER_KEY),
    // Upstream calls use the platform fetch: undici cannot run on workerd.
    services: { upstreamFetch: createFetchUpstream() },
  });
}

/**
 * The Cloudflare Workers entry: the same gateway app, built once per isolate from the Worker's bindings.
 * A config error answers 500 with the problems listed (it is the operator's error, not the client's).
 */
export default {
  fetch(
    request: Request,
    environment: WorkerEnvironment,
    context: WorkerExecutionContext,
  ): Response | Promise<Response> {
    if (cached === undefined || cached.environment !== environment) {
      try {
        cached = { environment, app: buildGateway(environment) };
      } catch (error) {
        const message = error instanceof ConfigError ? error.message : 'The gateway could not start.';
        console.error(message);
        return renderError(
          new GatewayError({ status: 500, type: 'api_error', code: 'invalid_config', message }),
          'openai',
        );
      }
    }
    return cached.app.fetch(request, environment, context as never);
  },
};
