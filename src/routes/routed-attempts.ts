import type { ProviderOperation } from '../canonical/provider-translator.ts';
import { GatewayError, isGatewayError } from '../errors.ts';
import { classifyAttemptFailure, type AttemptFailure } from '../routing/attempt-failure.ts';
import type { RoutingChoice } from '../routing/deployment-router.ts';
import type { ResolvedDeployment, ResolvedModelGroup } from '../routing/resolved-deployment.ts';
import type { RetryPolicy } from '../routing/routing-policy.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import type { RateLimitOutcome, RateLimitRefusal } from '../limits/rate-limit-outcome.ts';
import type { AttemptObservation } from '../services.ts';
import type { RouteDependencies } from './gateway-context.ts';
import type { ModelReply } from './gateway-responses.ts';
import type { RequestRecord } from './request-record.ts';

/** The most upstream attempts one request makes, retries and fallbacks together. */
export const maxAttemptsPerRequest = 10;

/** Where a request may go: its group, and whether it is held to one deployment or may fall back. */
export interface AttemptPlan {
  group: ResolvedModelGroup;
  operation: ProviderOperation;
  /** Only this deployment (a conversation the upstream keeps): retried there, never moved. */
  pinnedId?: string | undefined;
  /** This deployment first (a conversation the gateway keeps), others after it. */
  preferredId?: string | undefined;
  /** The request's most output tokens, counted with its prompt estimate against a deployment's `tpm`. */
  maxOutputTokens: number;
}

/** Serves a request on one deployment of one group; throws what failed. */
export type AttemptServe = (deployment: ResolvedDeployment, group: ResolvedModelGroup) => Promise<ModelReply>;

/** How long to wait before sending to a deployment again: exponential with jitter, or the upstream's `retry-after`. */
export function retryDelayMs(
  policy: RetryPolicy,
  repeats: number,
  retryAfter: number | undefined,
  random: () => number,
): number {
  const exponential = Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** Math.max(0, repeats - 1));
  const jittered = exponential / 2 + (random() * exponential) / 2;
  return Math.max(jittered, retryAfter ?? 0);
}

function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  if (milliseconds <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, milliseconds);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Takes one request and its estimated tokens from a deployment's `rpm`/`tpm` (undefined when it has neither): a
 * refusal means the provider account is at its capacity this minute and another deployment should serve.
 */
function reserveCapacity(
  capacity: RateLimiter,
  deployment: ResolvedDeployment,
  record: RequestRecord,
  maxOutputTokens: number,
): RateLimitOutcome | undefined | Promise<RateLimitOutcome> {
  const { rpm, tpm } = deployment.capacity;
  if (rpm === undefined && tpm === undefined) return undefined;
  return capacity.reserve({
    keyId: `deployment:${deployment.id}`,
    rpmLimit: rpm,
    tpmLimit: tpm,
    estimatedTokens: record.estimatedInputTokens + maxOutputTokens,
  });
}

/** The 429 when every deployment that could serve is at its provider account's capacity for this minute. */
export function capacityReached(group: string, refusal: RateLimitRefusal): GatewayError {
  return new GatewayError({
    status: 429,
    type: 'rate_limit_error',
    code: 'deployment_capacity_exceeded',
    retryable: true,
    headers: { 'retry-after': String(refusal.retryAfterSeconds) },
    message:
      `Every deployment of the model \`${group}\` is at its configured capacity (${refusal.limited === 'rpm' ? 'requests' : 'tokens'} ` +
      `per minute); try again in ${refusal.retryAfterSeconds} s.`,
  });
}

/** The 503 when no deployment of a group (nor of its fallbacks) may be tried: all of them are cooling down. */
export function noHealthyDeployment(group: string, cooledForMs: number): GatewayError {
  const seconds = Math.max(1, Math.ceil(cooledForMs / 1000));
  return new GatewayError({
    status: 503,
    type: 'upstream_error',
    code: 'no_healthy_deployment',
    retryable: true,
    headers: { 'retry-after': String(seconds) },
    message:
      `Every deployment of the model \`${group}\` is cooling down after failures (and no fallback could serve); ` +
      `try again in ${seconds} s.`,
  });
}

/**
 * The group through which `group` reaches deployment `deploymentId`: the group itself, or the first of its fallback
 * groups (plain, context-window, content-policy) that has it, since the operator allowed those for every key that may
 * call the group. A conversation an upstream keeps was served there and continues there. Undefined when none has it.
 */
export function groupReachingDeployment(
  modelGroups: ReadonlyMap<string, ResolvedModelGroup>,
  group: ResolvedModelGroup,
  deploymentId: string,
): ResolvedModelGroup | undefined {
  const has = (candidate: ResolvedModelGroup) =>
    candidate.deployments.some((deployment) => deployment.id === deploymentId);
  if (has(group)) return group;
  for (const name of [...group.fallbacks, ...group.contextWindowFallbacks, ...group.contentPolicyFallbacks]) {
    const candidate = modelGroups.get(name);
    if (candidate !== undefined && has(candidate)) return candidate;
  }
  return undefined;
}

/** One request's walk over deployments and groups. */
interface Walk {
  tried: Set<string>;
  /**
   * Failures per deployment in this request and the last `retry-after` each asked for; made on the first failure,
   * so a request served at once allocates nothing more than `tried`.
   */
  failed: Map<string, { failures: number; retryAfterMs: number | undefined }> | undefined;
  /** Deployments found at their `rpm`/`tpm` capacity (made on the first), and the latest refusal (its `retry-after`). */
  full: Set<string> | undefined;
  capacityRefusal: RateLimitRefusal | undefined;
  lastError: unknown;
}

/**
 * Runs a request through its group's deployments and then its fallback groups until one serves it: each attempt goes
 * to a deployment the router picks (an untried one first; a tried one again after a backoff), a failure is judged by
 * {@link classifyAttemptFailure} and told to the deployment's breaker, and a group is left for the next once the
 * failed deployment's `retries` are used or none of its deployments may be tried. A context-window or content-policy
 * failure moves on to the requested group's typed fallbacks. When nothing served, the last failure goes to the client
 * (or, when no attempt could be made at all, a 503 `no_healthy_deployment` with a `retry-after`).
 *
 * @example
 * const reply = await serveWithRetries(dependencies, record, { group, operation: 'chat' }, signal, serve);
 */
export async function serveWithRetries(
  dependencies: Pick<RouteDependencies, 'router' | 'modelGroups' | 'services' | 'capacity'>,
  record: RequestRecord,
  plan: AttemptPlan,
  clientSignal: AbortSignal,
  serve: AttemptServe,
): Promise<ModelReply> {
  const walk: Walk = {
    tried: new Set(),
    failed: undefined,
    full: undefined,
    capacityRefusal: undefined,
    lastError: undefined,
  };
  // The groups walked; made when the walk leaves the requested group.
  let visited: Set<string> | undefined;
  let queue: readonly string[] = [];
  let position = 0;
  let group: ResolvedModelGroup | undefined = plan.group;
  while (group !== undefined) {
    if (group !== plan.group) (visited ??= new Set([plan.group.name])).add(group.name);
    const outcome = await walkGroup(dependencies, record, plan, group, walk, clientSignal, serve);
    if (outcome.kind === 'served') return outcome.reply;
    if (outcome.kind === 'stop' || plan.pinnedId !== undefined) break;
    if (outcome.kind === 'typed' || group === plan.group) {
      // A typed failure's fallbacks replace whatever was left to try; the group's own list follows the group itself.
      queue =
        outcome.kind === 'exhausted'
          ? plan.group.fallbacks
          : outcome.fallback === 'context-window'
            ? plan.group.contextWindowFallbacks
            : plan.group.contentPolicyFallbacks;
      position = 0;
    }
    group = undefined;
    while (group === undefined && position < queue.length && record.attempts < maxAttemptsPerRequest) {
      const candidate = dependencies.modelGroups.get(queue[position++] as string);
      if (
        candidate !== undefined &&
        candidate !== plan.group &&
        !visited?.has(candidate.name) &&
        dependencies.router.serves(candidate, plan.operation)
      )
        group = candidate;
    }
  }
  if (walk.lastError !== undefined) throw walk.lastError;
  if (walk.capacityRefusal !== undefined) throw capacityReached(plan.group.name, walk.capacityRefusal);
  throw noHealthyDeployment(plan.group.name, dependencies.router.cooledForMs(plan.group, plan.operation));
}

type GroupOutcome =
  | { kind: 'served'; reply: ModelReply }
  /** The group is exhausted: the next group may be tried. */
  | { kind: 'exhausted' }
  /** A typed failure: its fallbacks are next. */
  | { kind: 'typed'; fallback: NonNullable<AttemptFailure['fallback']> }
  /** The request must stop here (the failure goes to the client). */
  | { kind: 'stop' };

async function walkGroup(
  dependencies: Pick<RouteDependencies, 'router' | 'services' | 'capacity'>,
  record: RequestRecord,
  plan: AttemptPlan,
  group: ResolvedModelGroup,
  walk: Walk,
  clientSignal: AbortSignal,
  serve: AttemptServe,
): Promise<GroupOutcome> {
  const { router, services } = dependencies;
  const original = group === plan.group;
  let attemptsInGroup = 0;
  while (record.attempts < maxAttemptsPerRequest) {
    const choice = router.choose(group, plan.operation, walk.tried, {
      pinnedId: original ? plan.pinnedId : undefined,
      preferredId: original ? plan.preferredId : undefined,
      excluded: walk.full,
    });
    if (choice === undefined) return { kind: 'exhausted' };
    const deployment = choice.runtime.deployment;
    if (choice.repeat && !(await waitBeforeRepeat(choice, walk, clientSignal, router, record, services.now)))
      return { kind: 'exhausted' };
    let reservation = reserveCapacity(dependencies.capacity, deployment, record, plan.maxOutputTokens);
    if (reservation instanceof Promise) reservation = await reservation;
    if (reservation !== undefined && !reservation.allowed) {
      router.finish(choice, { verdict: { kind: 'neutral' } });
      (walk.full ??= new Set()).add(deployment.id);
      walk.capacityRefusal = reservation;
      continue;
    }
    attemptsInGroup++;
    record.attempts++;
    walk.tried.add(deployment.id);
    record.deployment = deployment;
    record.provider = deployment.target.providerName;
    record.routedGroup = group.name;
    const startedAt = services.now();
    let reply: ModelReply;
    try {
      reply = await serve(deployment, group);
    } catch (error) {
      if (reservation !== undefined) dependencies.capacity.release(reservation);
      const failure = classifyAttemptFailure(error, clientSignal.aborted, Date.now());
      router.finish(choice, {
        verdict: failure.verdict,
        code: isGatewayError(error) ? (error.code ?? undefined) : undefined,
      });
      observeAttempt(services, record, group, plan, failure.verdict.kind === 'neutral' ? 'other' : 'failure');
      walk.lastError = error;
      if (failure.fallback !== undefined) return { kind: 'typed', fallback: failure.fallback };
      if (!failure.retry) return { kind: 'stop' };
      const failed = (walk.failed ??= new Map());
      const earlier = failed.get(deployment.id);
      failed.set(deployment.id, {
        failures: (earlier?.failures ?? 0) + 1,
        retryAfterMs: failure.retryAfterMs ?? earlier?.retryAfterMs,
      });
      if (attemptsInGroup > deployment.retry.retries) return { kind: 'exhausted' };
      continue;
    }
    router.finish(choice, { verdict: { kind: 'success' }, latencyMs: services.now() - startedAt });
    observeAttempt(services, record, group, plan, 'success');
    // Settled with the real usage when the request ends (finishRequest).
    record.capacityReservation = reservation;
    return { kind: 'served', reply };
  }
  return { kind: 'exhausted' };
}

function observeAttempt(
  services: RouteDependencies['services'],
  record: RequestRecord,
  group: ResolvedModelGroup,
  plan: AttemptPlan,
  outcome: AttemptObservation['outcome'],
): void {
  const attemptFinished = services.metrics.attemptFinished;
  if (attemptFinished === undefined) return;
  const deployment = record.deployment as ResolvedDeployment;
  attemptFinished.call(services.metrics, {
    modelGroup: group.name,
    deployment: deployment.id,
    provider: deployment.target.providerName,
    outcome,
    attempt: record.attempts,
    fallback: group !== plan.group,
  });
}

/**
 * Waits the backoff before a deployment this request already tried is sent to again; false (the permit given back)
 * when its `retry-after` is longer than the policy waits for, or the client left while waiting.
 */
async function waitBeforeRepeat(
  choice: RoutingChoice,
  walk: Walk,
  clientSignal: AbortSignal,
  router: RouteDependencies['router'],
  record: RequestRecord,
  now: () => number,
): Promise<boolean> {
  const deployment = choice.runtime.deployment;
  const failed = walk.failed?.get(deployment.id);
  const retryAfter = failed?.retryAfterMs;
  if (retryAfter !== undefined && retryAfter > deployment.retry.maxRetryAfterMs) {
    router.finish(choice, { verdict: { kind: 'neutral' } });
    return false;
  }
  const startedAt = now();
  await sleep(retryDelayMs(deployment.retry, failed?.failures ?? 1, retryAfter, Math.random), clientSignal);
  // A backoff is time lost to the upstream's failure, not the gateway's own: it counts as upstream time.
  record.upstreamMs += now() - startedAt;
  if (!clientSignal.aborted) return true;
  router.finish(choice, { verdict: { kind: 'neutral' } });
  return false;
}
