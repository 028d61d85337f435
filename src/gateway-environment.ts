import type { Context } from 'hono';
import type { RequestRecord } from './routes/request-record.ts';

/** Hono environment of the gateway app: the per-request record lives in `c.var.record`. */
export interface GatewayEnvironment {
  Variables: { record: RequestRecord };
}

/** A Hono context of the gateway app. */
export type GatewayContext = Context<GatewayEnvironment>;
