import type { GatewayServices } from '../services.ts';
import type { DeploymentRouter } from './deployment-router.ts';
import type { ResolvedDeployment, ResolvedModelGroup } from './resolved-deployment.ts';

/** The most of a health check's answer that is read (and thrown away): enough for any model list. */
const maxHealthCheckBodyBytes = 1024 * 1024;

/** The running health checks; `stop` clears every timer (shutdown, tests). */
export interface HealthChecks {
  /** Deployment ids that are checked. */
  readonly checked: readonly string[];
  stop(): void;
}

async function checkOnce(
  deployment: ResolvedDeployment,
  timeoutMs: number,
  services: Pick<GatewayServices, 'upstreamFetch'>,
): Promise<boolean> {
  try {
    // May wait for a token (Azure's Entra ID, Vertex AI's service account); a failure to get one fails the check.
    const request = await deployment.translator.buildHealthCheckRequest?.(deployment.target);
    if (request === undefined) return true;
    const response = await services.upstreamFetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: null,
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeoutMs: timeoutMs,
      bodyTimeoutMs: timeoutMs,
      ...(deployment.limits.connectTimeoutMs === undefined
        ? {}
        : { connectTimeoutMs: deployment.limits.connectTimeoutMs }),
    });
    await response.text(maxHealthCheckBodyBytes).catch(() => '');
    // A 429 says the account is busy, not that the deployment is down: it neither fails nor heals the deployment.
    if (response.status === 429) return true;
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Starts the optional background health checks of every group that has `healthCheck`: each deployment whose
 * translator has a health check request is checked every `intervalMs` (never two checks of one deployment at once),
 * and the result goes to the router (see DeploymentRouter.reportHealthCheck). A deployment's circuit comes back
 * through its probe request without these; they find a dead deployment before a client does, and a recovered one
 * before its cooldown ends. Timers do not keep a Node process alive.
 *
 * @example
 * const checks = startHealthChecks(modelGroups, router, services);
 * checks.stop();
 */
export function startHealthChecks(
  groups: ReadonlyMap<string, ResolvedModelGroup>,
  router: DeploymentRouter,
  services: Pick<GatewayServices, 'upstreamFetch'>,
): HealthChecks {
  const timers: ReturnType<typeof setInterval>[] = [];
  const checked: string[] = [];
  for (const group of groups.values()) {
    const settings = group.healthCheck;
    if (settings === undefined) continue;
    for (const deployment of group.deployments) {
      if (deployment.translator.buildHealthCheckRequest === undefined) continue;
      let running = false;
      const timer = setInterval(() => {
        if (running) return;
        running = true;
        checkOnce(deployment, settings.timeoutMs, services)
          .then((healthy) => router.reportHealthCheck(deployment.id, healthy))
          .finally(() => (running = false));
      }, settings.intervalMs);
      // Node: a check must not keep the process alive on its own (Deno's and the Web's timers have no unref).
      (timer as { unref?: () => void }).unref?.();
      timers.push(timer);
      checked.push(deployment.id);
    }
  }
  return {
    checked,
    stop() {
      for (const timer of timers) clearInterval(timer);
      timers.length = 0;
    },
  };
}
