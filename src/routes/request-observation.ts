import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import type { RequestObservation } from '../observability/request-observation.ts';
import type { RequestRecord } from './request-record.ts';

/** The usage a finished request is accounted with, and where it comes from (see finishRequest). */
export interface AccountedUsage {
  usage: CanonicalUsage;
  source: RequestObservation['usageSource'];
  costUsd: number;
}

/**
 * The observation of a finished request (the one record the access line, the metrics and a span read), computed from
 * its record at the moment it finishes (`finishedAt`, on the gateway's monotonic clock), with the usage and cost it
 * is accounted with.
 */
export function observationOf(
  record: RequestRecord,
  status: number,
  finishedAt: number,
  accounted: AccountedUsage,
): RequestObservation {
  const durationMs = finishedAt - record.startedAt;
  const { usage } = accounted;
  return {
    requestId: record.requestId,
    clientRequestId: record.clientRequestId,
    startedAtWall: record.startedAtWall,
    operation: record.operation ?? 'other',
    clientApi: record.clientApi,
    stream: record.stream,
    keyId: record.auth?.subject,
    keyPrefix: record.auth?.key?.prefix,
    modelGroup: record.modelGroup,
    servedModelGroup: record.routedGroup,
    provider: record.provider,
    deployment: record.deployment?.id,
    upstreamModel: record.deployment?.target.model,
    attempts: record.attempts,
    status,
    durationMs,
    upstreamMs: record.calledUpstream ? record.upstreamMs : undefined,
    overheadMs: record.overheadMeasured ? Math.max(0, durationMs - record.upstreamMs) : undefined,
    timeToFirstTokenMs: record.firstByteAt === undefined ? undefined : record.firstByteAt - record.startedAt,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cachedInputTokens: usage.cachedInputTokens ?? 0,
    reasoningTokens: usage.reasoningTokens ?? 0,
    usageSource: accounted.source,
    costUsd: accounted.costUsd,
    traceParent: record.traceParent,
  };
}
