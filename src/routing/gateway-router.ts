import type { GatewayServices } from '../services.ts';
import type { CircuitBus } from './circuit-bus.ts';
import { createDeploymentRouter, type CircuitChange, type DeploymentRouter } from './deployment-router.ts';
import type { ResolvedModelGroup } from './resolved-deployment.ts';

/**
 * The gateway's router: a {@link DeploymentRouter} whose circuit changes are counted in the metrics, logged, and
 * published on `circuitBus` when there is one, and which applies the changes other processes publish (their
 * openings for the time left of them, their closings at once). Nothing of this runs on a request's way: publishing
 * is fire-and-forget and changes arrive as messages.
 *
 * @example
 * const router = createGatewayRouter(modelGroups, services, bus);
 */
export function createGatewayRouter(
  modelGroups: ReadonlyMap<string, ResolvedModelGroup>,
  services: Pick<GatewayServices, 'now' | 'metrics' | 'logger'>,
  circuitBus: CircuitBus | undefined,
  wallNow: () => number = Date.now,
): DeploymentRouter {
  // This process's name on the bus, so it can tell its own changes when the bus echoes them back.
  const origin = crypto.randomUUID();
  const onCircuitChange = (change: CircuitChange) => {
    services.metrics.circuitChanged?.({ deployment: change.deploymentId, state: change.state, source: 'local' });
    if (change.state === 'open') {
      services.logger.warn('deployment cooling down', {
        deployment: change.deploymentId,
        forMs: Math.round(change.forMs),
      });
      circuitBus?.publish({
        origin,
        deploymentId: change.deploymentId,
        state: 'open',
        openUntil: Math.round(wallNow() + change.forMs),
      });
    } else {
      services.logger.info('deployment healthy again', { deployment: change.deploymentId });
      circuitBus?.publish({ origin, deploymentId: change.deploymentId, state: 'closed' });
    }
  };
  const router = createDeploymentRouter(modelGroups, { now: services.now, wallNow, onCircuitChange });
  circuitBus?.subscribe((change) => {
    if (change.origin === origin) return;
    const { deploymentId } = change;
    if (router.runtime(deploymentId) === undefined) return;
    if (change.state === 'closed') router.applyChange(change);
    else {
      const forMs = change.openUntil - wallNow();
      if (forMs <= 0) return;
      router.applyChange({ deploymentId, state: 'open', forMs });
    }
    services.metrics.circuitChanged?.({ deployment: deploymentId, state: change.state, source: 'shared' });
  });
  return router;
}
