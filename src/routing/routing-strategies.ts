import type { RoutingStrategyName } from '../config/config-schema.ts';
import type { DeploymentRuntime } from './deployment-runtime.ts';

/** Picks one of a group's usable deployments (never called with none). */
export type RoutingStrategy = (candidates: readonly DeploymentRuntime[], random: () => number) => DeploymentRuntime;

/** How often the `latency` strategy tries a deployment other than the fastest, so a recovered one is measured again. */
export const latencyExplorationShare = 0.05;

/** A pick by weight among `candidates`. */
export function pickWeighted(candidates: readonly DeploymentRuntime[], random: () => number): DeploymentRuntime {
  if (candidates.length === 1) return candidates[0] as DeploymentRuntime;
  let total = 0;
  for (const candidate of candidates) total += candidate.deployment.weight;
  let remaining = random() * total;
  for (const candidate of candidates) {
    remaining -= candidate.deployment.weight;
    if (remaining < 0) return candidate;
  }
  return candidates[candidates.length - 1] as DeploymentRuntime;
}

/** The candidates with the lowest `score`, picked among by weight. */
function lowest(
  candidates: readonly DeploymentRuntime[],
  score: (candidate: DeploymentRuntime) => number,
  random: () => number,
): DeploymentRuntime {
  let best = Infinity;
  let ties: DeploymentRuntime[] = [];
  for (const candidate of candidates) {
    const value = score(candidate);
    if (value < best) {
      best = value;
      ties = [candidate];
    } else if (value === best) ties.push(candidate);
  }
  // All scores NaN cannot happen (scores are numbers or Infinity), but an all-Infinity field still picks.
  return pickWeighted(ties.length === 0 ? candidates : ties, random);
}

/** Fewest attempts in flight (this process's count). */
function leastBusy(candidates: readonly DeploymentRuntime[], random: () => number): DeploymentRuntime {
  return lowest(candidates, (candidate) => candidate.inFlight, random);
}

/**
 * Lowest average time to first byte. A deployment never measured is tried first; otherwise one pick in twenty goes
 * to another candidate by weight, so a deployment that was slow (or cooled) is measured again.
 */
function lowestLatency(candidates: readonly DeploymentRuntime[], random: () => number): DeploymentRuntime {
  const unmeasured = candidates.filter((candidate) => candidate.latencyMs === undefined);
  if (unmeasured.length > 0) return pickWeighted(unmeasured, random);
  if (candidates.length > 1 && random() < latencyExplorationShare) return pickWeighted(candidates, random);
  return lowest(candidates, (candidate) => candidate.latencyMs as number, random);
}

/** Cheapest input plus output price per million tokens; deployments without a known price come last. */
function cheapest(candidates: readonly DeploymentRuntime[], random: () => number): DeploymentRuntime {
  return lowest(candidates, (candidate) => candidate.unitPrice, random);
}

/** The lowest tier (`priority`) that has a usable deployment, by weight within it. */
function byPriority(candidates: readonly DeploymentRuntime[], random: () => number): DeploymentRuntime {
  return lowest(candidates, (candidate) => candidate.deployment.priority, random);
}

/** Every strategy by its config name. */
export const routingStrategies: Readonly<Record<RoutingStrategyName, RoutingStrategy>> = {
  weighted: pickWeighted,
  'least-busy': leastBusy,
  latency: lowestLatency,
  cost: cheapest,
  priority: byPriority,
};
