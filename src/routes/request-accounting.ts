import type { AuthContext } from '../auth/authenticator.ts';
import type { VirtualKeyRecord } from '../auth/virtual-key-record.ts';
import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import { rateLimitError } from '../limits/rate-limit-error.ts';
import type { RateLimitOutcome } from '../limits/rate-limit-outcome.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import { costOf } from '../usage/usage-cost.ts';
import type { RouteDependencies } from './gateway-context.ts';
import { observationOf, type AccountedUsage } from './request-observation.ts';
import type { RequestRecord } from './request-record.ts';

/** Prompt tokens estimated from a request body's size: about four characters a token, JSON syntax included. */
export function estimateTokensFromText(length: number): number {
  return Math.ceil(length / 4);
}

function applyOutcome(rateLimiter: RateLimiter, outcome: RateLimitOutcome, record: RequestRecord): void {
  if (!outcome.allowed) throw rateLimitError(outcome);
  record.reservation = outcome;
  record.responseHeaders = rateLimiter.headers(outcome);
}

function reserve(
  rateLimiter: RateLimiter | undefined,
  key: VirtualKeyRecord,
  record: RequestRecord,
  completionAllowance: number,
): void | Promise<void> {
  if (rateLimiter === undefined || (key.rpmLimit === null && key.tpmLimit === null)) return;
  const outcome = rateLimiter.reserve({
    keyId: key.id,
    rpmLimit: key.rpmLimit,
    tpmLimit: key.tpmLimit,
    estimatedTokens: record.estimatedInputTokens + completionAllowance,
  });
  if (outcome instanceof Promise) return outcome.then((settled) => applyOutcome(rateLimiter, settled, record));
  applyOutcome(rateLimiter, outcome, record);
}

/**
 * Admits a routed request for a virtual key: budget first (a key over budget is refused whatever its rate), then
 * the RPM/TPM reservation (the prompt estimate plus `completionAllowance`, the request's max tokens). Throws the
 * 429 that refuses it. Synchronous when the key's state is in memory, which is the common case.
 */
export function admitRequest(
  dependencies: Pick<RouteDependencies, 'accounting'>,
  auth: AuthContext,
  record: RequestRecord,
  completionAllowance: number,
): void | Promise<void> {
  const key = auth.key;
  if (key === undefined) return;
  const { rateLimiter, budgets } = dependencies.accounting;
  const budgetCheck = key.budget !== null && budgets !== undefined ? budgets.check(key) : undefined;
  if (budgetCheck instanceof Promise)
    return budgetCheck.then(() => reserve(rateLimiter, key, record, completionAllowance));
  return reserve(rateLimiter, key, record, completionAllowance);
}

const ledgerOperations = new Set(['chat', 'embeddings']);

/**
 * A token count as the ledger stores it: a whole number in Postgres `integer` range. Upstreams report what they
 * like; one absurd number must not make the database refuse a whole batch forever.
 */
function tokenCount(value: number | undefined): number {
  if (value === undefined || !Number.isFinite(value) || value <= 0) return 0;
  return Math.min(Math.round(value), 2_147_483_647);
}

/**
 * The usage a finished request is accounted with: the provider's (after the sanity check); for a chat or embeddings
 * call that reached an upstream and succeeded without reporting any, the prompt estimate; otherwise zeros. Counts are
 * whole numbers in the ledger's range, so the access line, the metrics and the ledger row carry the same numbers.
 */
function accountedUsage(record: RequestRecord, status: number, adjusted: boolean): AccountedUsage {
  const reported = record.usage;
  const billable = record.operation !== undefined && ledgerOperations.has(record.operation);
  const estimated = billable && reported === undefined && record.calledUpstream && status < 400;
  const usage: CanonicalUsage =
    reported === undefined
      ? {
          inputTokens: estimated ? record.estimatedInputTokens : 0,
          outputTokens: 0,
          totalTokens: estimated ? record.estimatedInputTokens : 0,
        }
      : {
          inputTokens: tokenCount(reported.inputTokens),
          outputTokens: tokenCount(reported.outputTokens),
          totalTokens: tokenCount(reported.totalTokens),
          cachedInputTokens: tokenCount(reported.cachedInputTokens),
          cacheWriteInputTokens: tokenCount(reported.cacheWriteInputTokens),
          reasoningTokens: tokenCount(reported.reasoningTokens),
        };
  const price = record.deployment?.price;
  const computedCost = price === undefined || !billable ? 0 : costOf(usage, price);
  return {
    usage,
    source: adjusted ? 'provider-adjusted' : reported !== undefined ? 'provider' : estimated ? 'estimate' : 'none',
    costUsd: Number.isFinite(computedCost) && computedCost > 0 ? computedCost : 0,
  };
}

/**
 * Everything that happens when a request is over (the response sent, or the stream ended): the observation the
 * metrics and the access line read, the rate-limit settlement with real usage, the key's spend, and one usage event
 * for the ledger, all from the same numbers. Memory operations only. The one end of a request: idempotent, so a
 * second call (a stream ended after the middleware already ended its request, or the reverse) changes nothing.
 */
export function finishRequest(
  dependencies: Pick<RouteDependencies, 'services' | 'usageSanity' | 'accounting' | 'capacity'>,
  record: RequestRecord,
  status: number,
): void {
  if (record.ended) return;
  record.ended = true;
  // Upstream usage is validated and clamped once, here, before metrics, limits, budgets and the ledger see it.
  const adjustment =
    record.usage === undefined
      ? undefined
      : dependencies.usageSanity.check(record.usage, {
          requestId: record.requestId,
          provider: record.provider,
          deployment: record.deployment?.id,
          upstreamModel: record.deployment?.target.model,
        });
  if (adjustment !== undefined) record.usage = adjustment.usage;
  const accounted = accountedUsage(record, status, adjustment !== undefined);
  const { services } = dependencies;
  const observation = observationOf(record, status, services.now(), accounted);
  services.metrics.requestFinished(observation);
  services.accessLog?.(observation);
  services.traces?.(observation);
  if (record.capacityReservation !== undefined)
    dependencies.capacity.settle(record.capacityReservation, record.usage?.totalTokens ?? record.estimatedInputTokens);
  const auth = record.auth;
  if (auth === undefined || record.operation === undefined || !ledgerOperations.has(record.operation)) return;
  const { rateLimiter, budgets, recordUsage } = dependencies.accounting;
  const { usage, costUsd } = accounted;
  if (record.reservation !== undefined && rateLimiter !== undefined) {
    if (record.calledUpstream) rateLimiter.settle(record.reservation, usage.totalTokens);
    else rateLimiter.release(record.reservation);
  }
  if (auth.key !== undefined && costUsd > 0) budgets?.record(auth.key, costUsd);
  if (recordUsage === undefined) return;
  recordUsage({
    requestId: observation.requestId,
    clientRequestId: observation.clientRequestId,
    keyId: auth.key?.id ?? null,
    modelGroup: observation.modelGroup ?? null,
    provider: observation.provider ?? null,
    deployment: observation.deployment ?? null,
    upstreamModel: observation.upstreamModel ?? null,
    operation: record.operation,
    clientApi: record.clientApi ?? null,
    servedModelGroup: observation.servedModelGroup ?? null,
    attempts: observation.attempts,
    inputTokens: observation.inputTokens,
    outputTokens: observation.outputTokens,
    cachedInputTokens: observation.cachedInputTokens,
    reasoningTokens: observation.reasoningTokens,
    usageSource: observation.usageSource,
    costUsd,
    status,
    stream: observation.stream,
    latencyMs: observation.durationMs,
    timeToFirstTokenMs: observation.timeToFirstTokenMs ?? null,
    // The ledger's column is a number: where overhead cannot be measured (workerd) it stores 0, as before.
    overheadMs: observation.overheadMs ?? 0,
    startedAt: observation.startedAtWall,
    finishedAt: observation.startedAtWall + observation.durationMs,
  });
}
