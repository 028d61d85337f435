import type { Hono } from 'hono';
import { builtinProviders } from '../../providers/index.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import type { Authenticator } from '../../src/auth/authenticator.ts';
import type { ProviderRegistry } from '../../src/canonical/provider-translator.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { createGateway as createCoreGateway } from '../../src/gateway.ts';
import type { GatewayEnvironment } from '../../src/routes/gateway-context.ts';
import type { GatewayServices } from '../../src/services.ts';

/** Options of the library's {@link createGateway}. */
export interface LibraryGatewayOptions {
  /** The master key clients present (`Authorization: Bearer ...`). Required unless `authenticator` is given. */
  masterKey?: string;
  /** A custom authenticator instead of the master key. */
  authenticator?: Authenticator;
  /** Values for `${NAME}` references in the config (e.g. `process.env`, or a Worker's `env`). */
  environment?: Record<string, string | undefined>;
  /** Providers; defaults to the built-in ones (OpenAI-compatible presets and Anthropic). */
  providers?: ProviderRegistry;
  /** Runtime services; defaults to the global fetch and no metrics. */
  services?: Partial<GatewayServices>;
}

/**
 * torii as a library: a Hono app serving the OpenAI-compatible API, to serve from any Fetch-based runtime or mount
 * under a path of your own Hono app. The config is validated here (with `${ENV}` references resolved from
 * `options.environment`); an invalid one throws a ConfigError naming each field.
 *
 * @example
 * import { Hono } from 'hono';
 * import { createGateway } from 'torii';
 *
 * const app = new Hono();
 * app.route('/llm', createGateway(
 *   { modelGroups: { 'gpt-4o-mini': { deployments: [{ provider: 'openai', model: 'gpt-4o-mini', apiKey: '${OPENAI_API_KEY}' }] } } },
 *   { masterKey: process.env.TORII_MASTER_KEY, environment: process.env },
 * ));
 * // the openai SDK then uses baseURL 'http://host/llm/v1'
 */
export function createGateway(config: unknown, options: LibraryGatewayOptions = {}): Hono<GatewayEnvironment> {
  const authenticator =
    options.authenticator ??
    (options.masterKey !== undefined ? createMasterKeyAuthenticator(options.masterKey) : undefined);
  if (authenticator === undefined) throw new Error('createGateway needs a masterKey or an authenticator.');
  return createCoreGateway({
    config: parseGatewayConfig(config, options.environment ?? {}),
    providers: options.providers ?? builtinProviders,
    authenticator,
    ...(options.services ? { services: options.services } : {}),
  });
}

export { builtinProviders } from '../../providers/index.ts';
export { parseGatewayConfig } from '../../src/config/config-parse.ts';
export { ConfigError } from '../../src/config/config-error.ts';
export { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
export { GatewayError, isGatewayError } from '../../src/errors.ts';
export type { GatewayConfig, DeploymentConfig, ModelGroupConfig } from '../../src/config/config-schema.ts';
export type * from '../../src/canonical/index.ts';
export type {
  GatewayServices,
  GatewayMetrics,
  GatewayLogger,
  RequestObservation,
  UpstreamFetch,
} from '../../src/services.ts';
export type { Authenticator, AuthContext } from '../../src/auth/authenticator.ts';
