import { ConfigError } from './config-error.ts';
import { substituteEnvironmentReferences } from './config-environment.ts';
import { gatewayConfigSchema, type GatewayConfig } from './config-schema.ts';

/**
 * Validates a raw config object (parsed from YAML or JSON, or built in code), after substituting `${ENV}`
 * references. Throws a {@link ConfigError} naming every bad field and why.
 *
 * @example
 * const config = parseGatewayConfig(
 *   { modelGroups: { 'gpt-4o-mini': { deployments: [{ provider: 'openai', model: 'gpt-4o-mini', apiKey: '${OPENAI_API_KEY}' }] } } },
 *   process.env,
 * );
 */
export function parseGatewayConfig(raw: unknown, environment: Record<string, string | undefined> = {}): GatewayConfig {
  const substituted = substituteEnvironmentReferences(raw, environment);
  const result = gatewayConfigSchema.safeParse(substituted);
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.map((issue) => {
      const path = issue.path
        .map((segment) => (typeof segment === 'number' ? `[${segment}]` : `.${String(segment)}`))
        .join('')
        .replace(/^\./, '');
      return `${path || '(root)'}: ${issue.message}`;
    }),
  );
}
