import type { CooldownConfig, RetryConfig } from '../config/config-schema.ts';

/** How failed attempts are tried again: a resolved `retry` entry. */
export interface RetryPolicy {
  /** Attempts after the first within a group. */
  retries: number;
  /** The first backoff before a deployment is tried again, ms; doubled each time, with jitter. */
  backoffMs: number;
  /** The longest backoff, ms. */
  maxBackoffMs: number;
  /** The longest upstream `retry-after` the gateway waits for, ms. */
  maxRetryAfterMs: number;
}

/** When a deployment's circuit opens and how it closes again: a resolved `cooldown` entry. */
export interface CooldownPolicy {
  /** Failures within the window that open the circuit. */
  failures: number;
  windowMs: number;
  /** The failure ratio that opens the circuit once `minimumRequests` were seen in the window. */
  failureRatio: number;
  minimumRequests: number;
  /** The first cooldown, ms; doubled for each failed probe up to `maxCooldownMs`. */
  cooldownMs: number;
  maxCooldownMs: number;
  /** Requests let through at once to probe a deployment after its cooldown. */
  probes: number;
}

/** The retry defaults: two more attempts, 100 ms doubling to 2 s, `retry-after` honoured up to 5 s. */
export const defaultRetryPolicy: RetryPolicy = {
  retries: 2,
  backoffMs: 100,
  maxBackoffMs: 2000,
  maxRetryAfterMs: 5000,
};

/**
 * The breaker defaults: open after 5 failures in a minute, or half of at least 10 requests; 10 s cool, one probe, a
 * failed probe doubles the cooldown up to 5 minutes.
 */
export const defaultCooldownPolicy: CooldownPolicy = {
  failures: 5,
  windowMs: 60_000,
  failureRatio: 0.5,
  minimumRequests: 10,
  cooldownMs: 10_000,
  maxCooldownMs: 300_000,
  probes: 1,
};

function defined<T extends object>(entry: T | undefined): Partial<T> {
  if (entry === undefined) return {};
  return Object.fromEntries(Object.entries(entry).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** A retry policy from the config's layers, the most specific last (`routing.retry`, the group's, a deployment's). */
export function resolveRetryPolicy(...layers: (RetryConfig | undefined)[]): RetryPolicy {
  return Object.assign({ ...defaultRetryPolicy }, ...layers.map(defined)) as RetryPolicy;
}

/** A cooldown policy from the config's layers, the most specific last; the cap is never below the first cooldown. */
export function resolveCooldownPolicy(...layers: (CooldownConfig | undefined)[]): CooldownPolicy {
  const policy = Object.assign({ ...defaultCooldownPolicy }, ...layers.map(defined)) as CooldownPolicy;
  policy.maxCooldownMs = Math.max(policy.maxCooldownMs, policy.cooldownMs);
  return policy;
}
