import type { ProviderOperation } from '../canonical/provider-translator.ts';
import type { AttemptVerdict, CircuitPermit, CircuitState } from './deployment-circuit.ts';
import { createDeploymentRuntime, recordAttempt, type DeploymentRuntime } from './deployment-runtime.ts';
import type { ResolvedDeployment, ResolvedModelGroup } from './resolved-deployment.ts';
import { defaultCooldownPolicy } from './routing-policy.ts';
import { routingStrategies } from './routing-strategies.ts';

/** One deployment picked for one attempt, with the breaker's permit that must be given back when it ends. */
export interface RoutingChoice {
  runtime: DeploymentRuntime;
  permit: CircuitPermit;
  /** Whether this request already tried the deployment (a backoff is due before sending again). */
  repeat: boolean;
}

/** What the router is told about an attempt that ended. */
export interface AttemptReport {
  verdict: AttemptVerdict;
  /** Time to first byte of a successful attempt, ms. */
  latencyMs?: number | undefined;
  /** The failure's code, for the admin view. */
  code?: string | undefined;
}

/** A circuit that opened or closed in this process, as told to other processes (see {@link DeploymentRouter}). */
export type CircuitChange =
  { deploymentId: string; state: 'open'; forMs: number } | { deploymentId: string; state: 'closed' };

/** One deployment as `GET /admin/deployments` shows it. */
export interface DeploymentStatus {
  id: string;
  modelGroup: string;
  provider: string;
  model: string;
  state: CircuitState;
  /** Epoch ms the cooldown ends, while the circuit is open. */
  cooledUntil: number | null;
  inFlight: number;
  /** Average time to first byte, ms (null before the first success). */
  latencyMs: number | null;
  /** Smoothed share of failed attempts, 0 to 1. */
  errorRate: number;
  attempts: number;
  failures: number;
  lastFailure: { code: string; secondsAgo: number } | null;
}

/** What {@link createDeploymentRouter} takes. */
export interface DeploymentRouterOptions {
  /** Monotonic clock, ms. */
  now: () => number;
  /** Wall clock, epoch ms (the admin view's times). Defaults to `Date.now`. */
  wallNow?: () => number;
  /** Defaults to `Math.random`. */
  random?: () => number;
  /** Told whenever a circuit of this process opens or closes (to share it with other processes). */
  onCircuitChange?: (change: CircuitChange) => void;
}

/**
 * The routing state of one process: a {@link DeploymentRuntime} per deployment (breaker, in-flight count, latency),
 * and the choice of a deployment for each attempt by the group's strategy among those whose circuit lets a request
 * through. In memory and synchronous: a healthy request never waits for it.
 *
 * @example
 * const router = createDeploymentRouter(groups, { now: () => performance.now() });
 * const choice = router.choose(group, 'chat', new Set());
 * if (choice !== undefined) router.finish(choice, { verdict: { kind: 'success' }, latencyMs: 120 });
 */
export interface DeploymentRouter {
  /**
   * A deployment of `group` serving `operation` for the next attempt: one not in `tried` when any is usable, else a
   * tried one again; `preferredId` first when usable; only `pinnedId` when given; never one in `excluded` (at its
   * capacity). Undefined when every candidate's circuit is open (or its probes are out) or it is excluded.
   */
  choose(
    group: ResolvedModelGroup,
    operation: ProviderOperation,
    tried: ReadonlySet<string>,
    options?: {
      preferredId?: string | undefined;
      pinnedId?: string | undefined;
      excluded?: ReadonlySet<string> | undefined;
    },
  ): RoutingChoice | undefined;
  /** Ends an attempt: gives back its permit, counts its outcome, and tells other processes when a circuit changed. */
  finish(choice: RoutingChoice, report: AttemptReport): void;
  /** Whether any deployment of the group serves the operation at all. */
  serves(group: ResolvedModelGroup, operation: ProviderOperation): boolean;
  /** Milliseconds until the first of the group's open circuits (serving `operation`) lets a request through again. */
  cooledForMs(group: ResolvedModelGroup, operation: ProviderOperation): number;
  /**
   * Takes a background health check's result: a failure counts against the deployment like a failed attempt (and
   * may open its circuit); a success closes a circuit that is open or probing.
   */
  reportHealthCheck(deploymentId: string, healthy: boolean): void;
  /** Applies another process's circuit change to this one's breaker. */
  applyChange(change: CircuitChange): void;
  /** The runtime of a deployment by id. */
  runtime(deploymentId: string): DeploymentRuntime | undefined;
  /** Every deployment's state, for the admin API and the metrics. */
  statuses(): DeploymentStatus[];
}

/**
 * A router over every deployment of the resolved groups (see {@link DeploymentRouter}).
 *
 * @example
 * const router = createDeploymentRouter(dependencies.modelGroups, { now: services.now });
 */
export function createDeploymentRouter(
  groups: ReadonlyMap<string, ResolvedModelGroup>,
  options: DeploymentRouterOptions,
): DeploymentRouter {
  const { now } = options;
  const wallNow = options.wallNow ?? Date.now;
  const random = options.random ?? Math.random;
  const runtimes = new Map<string, DeploymentRuntime>();
  const byGroupOperation = new Map<string, DeploymentRuntime[]>();
  for (const group of groups.values())
    for (const deployment of group.deployments)
      runtimes.set(deployment.id, createDeploymentRuntime(deployment, group.cooldown));

  const runtimeOf = (deployment: ResolvedDeployment): DeploymentRuntime => {
    let runtime = runtimes.get(deployment.id);
    if (runtime === undefined) {
      // A group built outside the config's resolution (tests, a library's own groups): default breaker.
      runtime = createDeploymentRuntime(deployment, defaultCooldownPolicy);
      runtimes.set(deployment.id, runtime);
    }
    return runtime;
  };

  /** The group's deployments that serve the operation, computed once per group and operation. */
  const candidatesOf = (group: ResolvedModelGroup, operation: ProviderOperation): DeploymentRuntime[] => {
    const key = `${group.name}\u0000${operation}`;
    let list = byGroupOperation.get(key);
    if (list === undefined) {
      list = group.deployments
        .filter((deployment) => deployment.translator.operations.includes(operation))
        .map(runtimeOf);
      byGroupOperation.set(key, list);
    }
    return list;
  };

  const take = (runtime: DeploymentRuntime, repeat: boolean, at: number): RoutingChoice | undefined => {
    const permit = runtime.circuit.acquire(at);
    if (permit === undefined) return undefined;
    runtime.inFlight++;
    return { runtime, permit, repeat };
  };

  return {
    choose(group, operation, tried, choice) {
      const at = now();
      const excluded = choice?.excluded;
      if (choice?.pinnedId !== undefined) {
        const pinned = runtimes.get(choice.pinnedId);
        if (pinned === undefined || excluded?.has(choice.pinnedId)) return undefined;
        return take(pinned, tried.has(choice.pinnedId), at);
      }
      const candidates = candidatesOf(group, operation);
      if (candidates.length === 1) {
        const only = candidates[0] as DeploymentRuntime;
        if (excluded?.has(only.deployment.id)) return undefined;
        return take(only, tried.has(only.deployment.id), at);
      }
      if (choice?.preferredId !== undefined && !tried.has(choice.preferredId) && !excluded?.has(choice.preferredId)) {
        const preferred = candidates.find((candidate) => candidate.deployment.id === choice.preferredId);
        const taken = preferred === undefined ? undefined : take(preferred, false, at);
        if (taken !== undefined) return taken;
      }
      let fresh: DeploymentRuntime[] | undefined;
      let again: DeploymentRuntime[] | undefined;
      for (const candidate of candidates) {
        if (!candidate.circuit.available(at) || excluded?.has(candidate.deployment.id)) continue;
        if (tried.has(candidate.deployment.id)) (again ??= []).push(candidate);
        else (fresh ??= []).push(candidate);
      }
      const pool = fresh ?? again;
      if (pool === undefined) return undefined;
      const picked = routingStrategies[group.strategy](pool, random);
      return take(picked, pool === again, at);
    },

    finish(choice, report) {
      const { runtime, permit } = choice;
      const at = now();
      runtime.inFlight = Math.max(0, runtime.inFlight - 1);
      if (report.verdict.kind !== 'neutral')
        recordAttempt(runtime, {
          failed: report.verdict.kind !== 'success',
          latencyMs: report.latencyMs,
          code: report.code,
          at,
        });
      const wasOpen = runtime.circuit.openUntil !== 0;
      const opened = runtime.circuit.release(at, permit, report.verdict);
      const deploymentId = runtime.deployment.id;
      if (opened) options.onCircuitChange?.({ deploymentId, state: 'open', forMs: runtime.circuit.openUntil - at });
      else if (wasOpen && runtime.circuit.openUntil === 0) options.onCircuitChange?.({ deploymentId, state: 'closed' });
    },

    serves: (group, operation) => candidatesOf(group, operation).length > 0,

    cooledForMs(group, operation) {
      const at = now();
      let soonest = Infinity;
      for (const candidate of candidatesOf(group, operation))
        soonest = Math.min(soonest, Math.max(0, candidate.circuit.openUntil - at));
      return Number.isFinite(soonest) ? soonest : 0;
    },

    reportHealthCheck(deploymentId, healthy) {
      const runtime = runtimes.get(deploymentId);
      if (runtime === undefined) return;
      const at = now();
      if (healthy) {
        if (runtime.circuit.openUntil === 0) return;
        runtime.circuit.closeFromElsewhere();
        options.onCircuitChange?.({ deploymentId, state: 'closed' });
        return;
      }
      recordAttempt(runtime, { failed: true, code: 'health_check_failed', at });
      if (runtime.circuit.release(at, 'normal', { kind: 'failure' }))
        options.onCircuitChange?.({ deploymentId, state: 'open', forMs: runtime.circuit.openUntil - at });
    },

    applyChange(change) {
      const runtime = runtimes.get(change.deploymentId);
      if (runtime === undefined) return;
      if (change.state === 'open') runtime.circuit.openFromElsewhere(now(), change.forMs);
      else runtime.circuit.closeFromElsewhere();
    },

    runtime: (deploymentId) => runtimes.get(deploymentId),

    statuses() {
      const at = now();
      const wall = wallNow();
      const statuses: DeploymentStatus[] = [];
      for (const group of groups.values())
        for (const deployment of group.deployments) {
          const runtime = runtimeOf(deployment);
          const state = runtime.circuit.state(at);
          statuses.push({
            id: deployment.id,
            modelGroup: group.name,
            provider: deployment.target.providerName,
            model: deployment.target.model,
            state,
            cooledUntil: state === 'open' ? Math.round(wall + runtime.circuit.openUntil - at) : null,
            inFlight: runtime.inFlight,
            latencyMs: runtime.latencyMs === undefined ? null : Math.round(runtime.latencyMs * 10) / 10,
            errorRate: Math.round(runtime.errorRate * 1000) / 1000,
            attempts: runtime.attempts,
            failures: runtime.failures,
            lastFailure:
              runtime.lastFailure === undefined
                ? null
                : { code: runtime.lastFailure.code, secondsAgo: Math.round((at - runtime.lastFailure.at) / 1000) },
          });
        }
      return statuses;
    },
  };
}
