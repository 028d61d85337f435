import { describe, expect, it } from 'vitest';
import { createGatewayPrometheusMetrics } from './gateway-metrics.ts';
import { renderPrometheusText } from './prometheus-text.ts';
import type { RequestObservation } from './request-observation.ts';

function observation(overrides: Partial<RequestObservation>): RequestObservation {
  return {
    requestId: 'request-1',
    clientRequestId: null,
    startedAtWall: 0,
    operation: 'chat',
    clientApi: 'openai-chat',
    stream: false,
    keyId: 'master',
    keyPrefix: undefined,
    modelGroup: 'group-a',
    servedModelGroup: undefined,
    provider: 'openai',
    deployment: 'group-a/0',
    upstreamModel: 'model-a',
    attempts: 1,
    status: 200,
    durationMs: 10,
    upstreamMs: 8,
    overheadMs: 2,
    timeToFirstTokenMs: undefined,
    inputTokens: 3,
    outputTokens: 4,
    cachedInputTokens: 0,
    reasoningTokens: 0,
    usageSource: 'provider',
    costUsd: 0,
    traceParent: undefined,
    ...overrides,
  };
}

/** The `torii_requests_total` samples of an exposition, by their label text. */
function requestCounts(text: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^torii_requests_total\{(.*)\} (\d+)$/.exec(line);
    if (match !== null) counts[match[1]!] = Number(match[2]);
  }
  return counts;
}

describe('createGatewayPrometheusMetrics', () => {
  it('counts each request in the series of its own labels, whether requests alike come in runs or alternate', () => {
    const metrics = createGatewayPrometheusMetrics();
    const kinds: Partial<RequestObservation>[] = [
      {},
      { status: 429 },
      { modelGroup: 'group-b' },
      { provider: 'anthropic' },
      { operation: 'embeddings' },
      { clientApi: 'anthropic-messages' },
      { stream: true, timeToFirstTokenMs: 1 },
    ];
    // Runs of one kind, then every kind in turn, then runs again: a request is never counted under its predecessor's.
    const order = [0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 6, 6, 2];
    for (const index of order) metrics.requestFinished(observation(kinds[index]!));
    const counts = requestCounts(renderPrometheusText(metrics.families));
    const expected = (index: number) => order.filter((each) => each === index).length;
    const labelled = (overrides: Partial<RequestObservation>) => {
      const { operation, clientApi, modelGroup, provider, status } = observation(overrides);
      return `operation="${operation}",client_api="${clientApi}",model_group="${modelGroup}",provider="${provider}",status_code="${status}"`;
    };
    // The stream flag is not a label of torii_requests_total: the plain kind and the stream kind share a series.
    expect(counts).toEqual({
      [labelled({})]: expected(0) + expected(6),
      [labelled({ status: 429 })]: expected(1),
      [labelled({ modelGroup: 'group-b' })]: expected(2),
      [labelled({ provider: 'anthropic' })]: expected(3),
      [labelled({ operation: 'embeddings' })]: expected(4),
      [labelled({ clientApi: 'anthropic-messages' })]: expected(5),
    });
    // The duration series is labelled by operation, model group and stream.
    const durations = renderPrometheusText(metrics.families)
      .split('\n')
      .filter((line) => line.startsWith('torii_request_duration_seconds_count'));
    expect(durations.sort()).toEqual(
      [
        `{operation="chat",model_group="group-a",stream="false"} ${expected(0) + expected(1) + expected(3) + expected(5)}`,
        `{operation="chat",model_group="group-a",stream="true"} ${expected(6)}`,
        `{operation="chat",model_group="group-b",stream="false"} ${expected(2)}`,
        `{operation="embeddings",model_group="group-a",stream="false"} ${expected(4)}`,
      ]
        .map((series) => `torii_request_duration_seconds_count${series}`)
        .sort(),
    );
  });
});
