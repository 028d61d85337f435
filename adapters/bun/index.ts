/**
 * `torii-gateway/bun`: the gateway as a Bun server (`Bun.serve`), on the same lifecycle as the Node and Deno servers.
 *
 * @example
 * import { startBunServer } from 'torii-gateway/bun';
 * await startBunServer({ port: 8787 });
 */
export { startBunServer, type BunGatewayServer, type BunServerOptions } from './bun-server.ts';
