import { Hono } from 'hono';
import type { GatewayEnvironment } from '../gateway-environment.ts';
import type { DeploymentRouter, DeploymentStatus } from '../routing/deployment-router.ts';
import { requireMaster, type AdminDependencies } from './admin-access.ts';

/** One deployment in the admin API's snake_case. */
function statusJson(status: DeploymentStatus) {
  return {
    id: status.id,
    model_group: status.modelGroup,
    provider: status.provider,
    model: status.model,
    state: status.state === 'closed' ? 'healthy' : status.state === 'open' ? 'cooling_down' : 'probing',
    cooled_until: status.cooledUntil === null ? null : new Date(status.cooledUntil).toISOString(),
    in_flight: status.inFlight,
    latency_ms: status.latencyMs,
    error_rate: status.errorRate,
    attempts: status.attempts,
    failures: status.failures,
    last_failure:
      status.lastFailure === null
        ? null
        : { code: status.lastFailure.code, seconds_ago: status.lastFailure.secondsAgo },
  };
}

/**
 * `GET /admin/deployments`, master key only: each deployment's routing state as the answering process sees it:
 * `healthy`, `cooling_down` (with `cooled_until`) or `probing` (its cooldown is over and a probe decides), requests
 * in flight, the moving average of its time to first byte, its smoothed error rate, and its attempts and failures
 * since the process started.
 *
 * @example
 * app.route('/admin', createAdminDeploymentsRoutes({ ...adminDependencies, router }));
 */
export function createAdminDeploymentsRoutes(dependencies: AdminDependencies & { router: DeploymentRouter }) {
  const app = new Hono<GatewayEnvironment>();
  app.get('/deployments', async (c) => {
    c.var.record.operation = 'admin';
    await requireMaster(dependencies, c.req.raw);
    return c.json({ object: 'list', data: dependencies.router.statuses().map(statusJson) });
  });
  return app;
}
