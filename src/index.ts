/**
 * The runtime-neutral core of torii. Adapters (Node, Cloudflare Workers, Deno, the library entry) wire it to a
 * runtime; nothing here touches a runtime API.
 */
export { createGateway, gatewayDirectRoutes, type GatewayOptions } from './gateway.ts';
export { parseGatewayConfig } from './config/config-parse.ts';
export { ConfigError } from './config/config-error.ts';
export type { GatewayConfig, DeploymentConfig, ModelGroupConfig } from './config/config-schema.ts';
export type { CircuitBus, SharedCircuitChange } from './routing/circuit-bus.ts';
export { createMasterKeyAuthenticator } from './auth/master-key-authenticator.ts';
export type { Authenticator, AuthContext } from './auth/authenticator.ts';
export { GatewayError, isGatewayError, renderError } from './errors.ts';
export type * from './canonical/index.ts';
export type * from './services.ts';
export { consoleLogger, noMetrics } from './services.ts';
export {
  createJsonLogger,
  consoleLineWriter,
  type LeveledLogger,
  type LogLineWriter,
} from './observability/json-logger.ts';
export { createAccessLog, accessLine, type AccessLog } from './observability/access-log.ts';
export { parseLogLevel, type LogLevel } from './observability/log-level.ts';
export { createGatewayPrometheusMetrics, type GatewayPrometheusMetrics } from './observability/gateway-metrics.ts';
export { renderPrometheusText, prometheusContentType } from './observability/prometheus-text.ts';
