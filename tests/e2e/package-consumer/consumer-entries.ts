// The entries a consumer without a database uses (and the Redis, Workers KV and Bun ones), imported as a strict consumer does (skipLibCheck: false): every
// declaration they reach must type-check, with only their own peer dependencies installed.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Hono } from 'hono';
import { createGateway, ConfigError, type GatewayConfig, type CanonicalChatRequest } from 'torii-gateway';
import { createUpstashKeyValueCache, createUpstashLimitStore } from 'torii-gateway/drivers/upstash';
import { createRedisKeyValueCache, createRedisLimitStore, openRedisConnection } from 'torii-gateway/drivers/redis';
import { createWorkersKvKeyValueCache } from 'torii-gateway/drivers/workers-kv';
import { startBunServer, type BunGatewayServer } from 'torii-gateway/bun';
import { createNodeRequestHandler } from 'torii-gateway/node-handler';
import { createNodeGateway, startNodeHttpServer } from 'torii-gateway/node';

const config: GatewayConfig = {
  modelGroups: { fast: { deployments: [{ provider: 'openai', model: 'gpt-4o-mini', apiKey: '${OPENAI_API_KEY}' }] } },
};
const app = new Hono();
app.route('/llm', createGateway(config, { masterKey: 'sk-x', environment: process.env }));
export const handler: (incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void> =
  createNodeRequestHandler(app);
export const pieces = [
  ConfigError,
  createUpstashKeyValueCache,
  createUpstashLimitStore,
  createNodeGateway,
  startNodeHttpServer,
  createRedisKeyValueCache,
  createRedisLimitStore,
  openRedisConnection,
  createWorkersKvKeyValueCache,
  startBunServer,
];
export type Pieces = [CanonicalChatRequest, BunGatewayServer];
