import { afterEach, describe, expect, it } from 'vitest';
import { recordingLogger } from '../../tests/support/recording-logger.ts';
import { spanAttribute, startOtlpCollector, type OtlpCollector } from '../../tests/support/otlp-collector.ts';
import { createOtlpTraceExporter } from './otlp-trace-exporter.ts';
import type { RequestObservation } from './request-observation.ts';
import { exampleObservation } from '../../tests/support/request-observation-example.ts';
import { parseTraceParent } from './trace-context.ts';
import { createTraceSampler } from './trace-sampler.ts';

const observation: RequestObservation = {
  ...exampleObservation,
  requestId: 'req-1',
  clientRequestId: 'client-1',
  startedAtWall: 1_764_230_400_123.5,
  clientApi: 'openai-chat',
  keyId: 'master',
  keyPrefix: undefined,
  provider: 'bedrock-anthropic',
  upstreamModel: 'anthropic.claude-sonnet-4',
  attempts: 2,
  durationMs: 812.25,
};

const alwaysOn = createTraceSampler({ sampler: 'parentbased_always_on', ratio: 1 });

describe('createOtlpTraceExporter (a local collector over HTTP)', () => {
  let collector: OtlpCollector | undefined;
  afterEach(async () => {
    await collector?.close();
    collector = undefined;
  });

  it('exports one span per request in OTLP JSON: GenAI attributes, exact times, the caller as parent', async () => {
    collector = await startOtlpCollector();
    const { logger } = recordingLogger();
    const exporter = createOtlpTraceExporter({
      endpoint: `${collector.url}/v1/traces`,
      headers: { 'x-api-key': 'collector-secret' },
      serviceName: 'torii-test',
      sampler: alwaysOn,
      logger,
    });
    const parent = parseTraceParent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    exporter.record({ ...observation, traceParent: parent });
    exporter.record({ ...observation, requestId: 'req-2', status: 502, operation: 'embeddings' });
    await exporter.flush();
    expect(collector.exports()).toBe(1);
    const [first, second] = collector.spans;
    expect(first?.serviceName).toBe('torii-test');
    expect(first?.headers['x-api-key']).toBe('collector-secret');
    expect(first?.span).toMatchObject({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      parentSpanId: '00f067aa0ba902b7',
      name: 'chat claude',
      kind: 2,
      startTimeUnixNano: '1764230400123500000',
      endTimeUnixNano: '1764230400935750000',
      status: { code: 0 },
    });
    expect(first?.span.spanId).toMatch(/^[0-9a-f]{16}$/);
    const span = first!.span;
    expect(spanAttribute(span, 'gen_ai.operation.name')).toBe('chat');
    expect(spanAttribute(span, 'gen_ai.provider.name')).toBe('aws.bedrock');
    expect(spanAttribute(span, 'gen_ai.request.model')).toBe('claude');
    expect(spanAttribute(span, 'gen_ai.response.model')).toBe('anthropic.claude-sonnet-4');
    expect(spanAttribute(span, 'gen_ai.usage.input_tokens')).toBe(1200);
    expect(spanAttribute(span, 'gen_ai.usage.output_tokens')).toBe(80);
    expect(spanAttribute(span, 'http.response.status_code')).toBe(200);
    expect(spanAttribute(span, 'torii.request_id')).toBe('req-1');
    expect(spanAttribute(span, 'torii.cost_usd')).toBe(0.00186);
    expect(spanAttribute(span, 'error.type')).toBeUndefined();
    // A new trace of its own, and a server error marked as one.
    expect(second?.span.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(second?.span.parentSpanId).toBeUndefined();
    expect(second?.span.name).toBe('embeddings claude');
    expect(second?.span.status).toEqual({ code: 2 });
    expect(spanAttribute(second!.span, 'error.type')).toBe('502');
  });

  it('samples as OpenTelemetry does: the caller decides when it sent a traceparent, else the ratio', async () => {
    collector = await startOtlpCollector();
    const { logger } = recordingLogger();
    const exporter = createOtlpTraceExporter({
      endpoint: `${collector.url}/v1/traces`,
      serviceName: 'torii',
      sampler: createTraceSampler({ sampler: 'parentbased_traceidratio', ratio: 0 }),
      logger,
    });
    exporter.record(observation); // a root at ratio 0: dropped
    exporter.record({
      ...observation,
      requestId: 'kept',
      traceParent: parseTraceParent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'),
    });
    exporter.record({
      ...observation,
      requestId: 'not-sampled-by-caller',
      traceParent: parseTraceParent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00'),
    });
    await exporter.flush();
    expect(collector.spans.map((received) => spanAttribute(received.span, 'torii.request_id'))).toEqual(['kept']);
  });

  it('bounds its memory and never throws: a full queue and a failing collector drop spans, counted and logged once', async () => {
    collector = await startOtlpCollector();
    collector.answerWith(503);
    const { logger, lines } = recordingLogger();
    const exporter = createOtlpTraceExporter({
      endpoint: `${collector.url}/v1/traces`,
      serviceName: 'torii',
      sampler: alwaysOn,
      logger,
      maxQueuedSpans: 5,
      maxBatchSpans: 2,
    });
    for (let index = 0; index < 8; index++) exporter.record({ ...observation, requestId: `r${index}` });
    expect(exporter.dropped()).toBe(3);
    await exporter.flush();
    expect(collector.exports()).toBe(3); // 5 queued, 2 per batch
    expect(exporter.dropped()).toBe(8);
    expect(lines.filter((line) => line.message.includes('trace export failed'))).toHaveLength(1);
    // Nowhere to send at all: still no throw.
    const unreachable = createOtlpTraceExporter({
      endpoint: 'http://127.0.0.1:1/v1/traces',
      serviceName: 'torii',
      sampler: alwaysOn,
      logger,
    });
    unreachable.record(observation);
    await expect(unreachable.flush()).resolves.toBeUndefined();
    expect(unreachable.dropped()).toBe(1);
  });
});
