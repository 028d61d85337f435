/** The Node entry of the library: the Node wiring pieces, for embedding torii in a Node process of your own. */
export { createNodeGateway, type NodeGateway, type NodeGatewayOptions } from './node-gateway.ts';
export { startNodeHttpServer, type NodeHttpServer, type NodeHttpServerOptions } from './node-http-server.ts';
export { createNodeRequestHandler, type FetchApplication } from './node-request-handler.ts';
export { createUndiciUpstreamFetch, type UndiciUpstreamOptions } from './undici-upstream-fetch.ts';
export { createPrometheusMetrics, type PrometheusMetrics } from './prometheus-metrics.ts';
export {
  createGptTokenizerTokenCounter,
  type GptTokenizerTokenCounterOptions,
} from '../shared/gpt-tokenizer-token-counter.ts';
