import { DeploymentCircuit } from './deployment-circuit.ts';
import type { CooldownPolicy } from './routing-policy.ts';
import type { ResolvedDeployment } from './resolved-deployment.ts';

/** What one process knows about a deployment while routing to it: its breaker, its load and how fast it answers. */
export interface DeploymentRuntime {
  readonly deployment: ResolvedDeployment;
  readonly circuit: DeploymentCircuit;
  /** Attempts sent to it and not finished yet. */
  inFlight: number;
  /** Exponentially weighted mean of its time to first byte (a stream's first event, a whole answer), ms. */
  latencyMs: number | undefined;
  /** Exponentially weighted share of failed attempts (0 to 1), for the admin view. */
  errorRate: number;
  /** Attempts finished since the process started, and how many of them failed. */
  attempts: number;
  failures: number;
  /** The last failure's code and its monotonic time. */
  lastFailure: { code: string; at: number } | undefined;
  /** Input plus output price per million tokens, for the `cost` strategy; Infinity when unknown. */
  readonly unitPrice: number;
}

/** How much one new sample moves the latency and error-rate averages. */
export const runtimeSmoothing = 0.2;

/** A fresh runtime for a deployment under its group's breaker policy. */
export function createDeploymentRuntime(deployment: ResolvedDeployment, cooldown: CooldownPolicy): DeploymentRuntime {
  const price = deployment.price;
  return {
    deployment,
    circuit: new DeploymentCircuit(cooldown),
    inFlight: 0,
    latencyMs: undefined,
    errorRate: 0,
    attempts: 0,
    failures: 0,
    lastFailure: undefined,
    unitPrice: price === undefined ? Infinity : price.inputPerMillion + price.outputPerMillion,
  };
}

/** Folds one finished attempt into a runtime's averages (the breaker is told separately). */
export function recordAttempt(
  runtime: DeploymentRuntime,
  outcome: { failed: boolean; latencyMs?: number | undefined; code?: string | undefined; at: number },
): void {
  runtime.attempts++;
  runtime.errorRate += ((outcome.failed ? 1 : 0) - runtime.errorRate) * runtimeSmoothing;
  if (outcome.failed) {
    runtime.failures++;
    runtime.lastFailure = { code: outcome.code ?? 'upstream_error', at: outcome.at };
    return;
  }
  if (outcome.latencyMs === undefined) return;
  runtime.latencyMs =
    runtime.latencyMs === undefined
      ? outcome.latencyMs
      : runtime.latencyMs + (outcome.latencyMs - runtime.latencyMs) * runtimeSmoothing;
}
