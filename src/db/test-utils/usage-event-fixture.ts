import type { UsageEvent } from '../../usage/usage-event.ts';

/** A complete usage event with plausible values; `overrides` replace fields. */
export function usageEventFixture(overrides: Partial<UsageEvent> = {}): UsageEvent {
  const startedAt = overrides.startedAt ?? Date.UTC(2025, 2, 10, 12, 0, 0, 250);
  return {
    requestId: `req_${crypto.randomUUID()}`,
    clientRequestId: 'client-request-1',
    keyId: 'key_a',
    modelGroup: 'gpt-4o',
    provider: 'openai',
    deployment: 'openai/gpt-4o-2024-08-06',
    upstreamModel: 'gpt-4o-2024-08-06',
    operation: 'chat',
    clientApi: 'openai-chat',
    servedModelGroup: 'gpt-4o',
    attempts: 1,
    inputTokens: 120,
    outputTokens: 30,
    cachedInputTokens: 64,
    reasoningTokens: 0,
    usageSource: 'provider',
    costUsd: 0.000_725,
    status: 200,
    stream: true,
    latencyMs: 812.375,
    timeToFirstTokenMs: 201.5,
    overheadMs: 0.812_5,
    startedAt,
    finishedAt: startedAt + 812,
    ...overrides,
  };
}
