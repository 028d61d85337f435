import type { ResolvedDeployment, ResolvedModelGroup } from './resolved-deployment.ts';

/**
 * Picks a deployment of a group by weight. A single deployment is returned without drawing a random number.
 * (Least-busy and latency-aware strategies, cooldowns and fallbacks arrive with the routing issue.)
 */
export function pickDeployment(group: ResolvedModelGroup, random: () => number = Math.random): ResolvedDeployment {
  const deployments = group.deployments;
  if (deployments.length === 1) return deployments[0] as ResolvedDeployment;
  let remaining = random() * group.totalWeight;
  for (const deployment of deployments) {
    remaining -= deployment.weight;
    if (remaining < 0) return deployment;
  }
  return deployments[deployments.length - 1] as ResolvedDeployment;
}
