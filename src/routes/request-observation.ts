import type { RequestObservation } from '../services.ts';
import type { RouteDependencies } from './gateway-context.ts';
import type { RequestRecord } from './request-record.ts';

/** The metrics observation of a finished request, computed from its record at the moment it finishes. */
export function observationOf(
  dependencies: Pick<RouteDependencies, 'services'>,
  record: RequestRecord,
  status: number,
): RequestObservation {
  const durationMs = dependencies.services.now() - record.startedAt;
  return {
    modelGroup: record.modelGroup,
    provider: record.provider,
    operation: record.operation ?? 'other',
    status,
    stream: record.stream,
    durationMs,
    upstreamMs: record.calledUpstream ? record.upstreamMs : undefined,
    overheadMs: Math.max(0, durationMs - record.upstreamMs),
    inputTokens: record.usage?.inputTokens,
    outputTokens: record.usage?.outputTokens,
  };
}
