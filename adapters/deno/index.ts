/** The Deno entry of the library: serve the gateway with Deno.serve from your own Deno program. */
export { startDenoServer, type DenoServerOptions } from './deno-server.ts';
