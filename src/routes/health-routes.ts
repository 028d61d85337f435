import { Hono } from 'hono';
import { GatewayError } from '../errors.ts';
import type { GatewayServices } from '../services.ts';
import type { GatewayEnvironment } from '../gateway-environment.ts';

/**
 * `/health/live` (the process answers), `/health/ready` (it accepts traffic; 503 while draining for shutdown) and
 * `/metrics` when the runtime provides an exposition.
 */
export function createHealthRoutes(services: GatewayServices): Hono<GatewayEnvironment> {
  const routes = new Hono<GatewayEnvironment>();
  routes.get('/health/live', () => Response.json({ status: 'ok' }));
  routes.get('/health/ready', () => {
    const ready = services.isReady?.() ?? true;
    return Response.json({ status: ready ? 'ready' : 'draining' }, { status: ready ? 200 : 503 });
  });
  routes.get('/metrics', async () => {
    if (services.metricsExposition === undefined) {
      throw new GatewayError({
        status: 404,
        type: 'not_found_error',
        code: 'metrics_unavailable',
        message: 'Metrics are not exposed on this runtime.',
      });
    }
    const { contentType, body } = await services.metricsExposition();
    return new Response(body, { headers: { 'content-type': contentType } });
  });
  return routes;
}
