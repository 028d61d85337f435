import type { UsageEvent } from './usage-event.ts';

/** A plausible usage event with request id `request-<index>`, for tests of the queue and the spills. */
export function testUsageEvent(index: number): UsageEvent {
  const startedAt = 1_750_000_000_000 + index;
  return {
    requestId: `request-${index}`,
    clientRequestId: index % 3 === 0 ? null : `client-${index % 5}`,
    keyId: `key_${index % 7}`,
    modelGroup: 'chat',
    provider: 'openai',
    deployment: 'openai/gpt-4o',
    upstreamModel: 'gpt-4o-2024-08-06',
    operation: 'chat',
    inputTokens: 100 + (index % 13),
    outputTokens: 20 + (index % 5),
    cachedInputTokens: 0,
    reasoningTokens: 0,
    usageSource: 'provider',
    costUsd: 0.00045,
    status: 200,
    stream: index % 2 === 0,
    latencyMs: 120,
    timeToFirstTokenMs: index % 2 === 0 ? 40 : null,
    overheadMs: 0.4,
    startedAt,
    finishedAt: startedAt + 120,
  };
}
