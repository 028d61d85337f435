import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { spanAttribute, startOtlpCollector, type OtlpCollector } from '../support/otlp-collector.ts';
import { e2eEnvironment, e2eGatewayConfig, e2eMasterKey } from './e2e-fixtures.ts';
import type { RunningGateway } from './gateway-process.ts';
import { serverRuntimes } from './gateway-starters.ts';

/** The access line of `requestId` in a gateway's output. */
function accessLineOf(output: string, requestId: string): Record<string, unknown> | undefined {
  for (const line of output.split('\n')) {
    if (!line.includes(requestId) || !line.includes('"message":"request"')) continue;
    return JSON.parse(line.slice(line.indexOf('{'))) as Record<string, unknown>;
  }
  return undefined;
}

/**
 * The sum of a Prometheus counter's series whose labels include every one of `labels` (several series differ in labels
 * the test does not fix, such as the client API); undefined when `/metrics` is not served (a Worker).
 */
async function counterSum(baseURL: string, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const response = await fetch(`${baseURL}/metrics`);
  if (response.status !== 200) return undefined;
  let total = 0;
  for (const line of (await response.text()).split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length, line.lastIndexOf('}') + 1);
    if (Object.entries(labels).every(([label, value]) => labelText.includes(`${label}="${value}"`)))
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

// OpenTelemetry export on each runtime: one span per request to a local OTLP/HTTP collector, a child of the caller's
// traceparent, agreeing with the response and the access line on request id, tokens and status.
for (const runtime of serverRuntimes) {
  describe(`OTLP trace export on ${runtime.name}`, { timeout: 120_000 }, () => {
    let mock: MockUpstream;
    let collector: OtlpCollector;
    let gateway: RunningGateway;

    beforeAll(async () => {
      mock = await startMockUpstream();
      collector = await startOtlpCollector();
      gateway = await runtime.start(e2eGatewayConfig(mock.url), {
        ...e2eEnvironment,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=e2e-secret',
        OTEL_SERVICE_NAME: 'torii-e2e',
      });
    }, 180_000);

    afterAll(async () => {
      await gateway?.stop();
      await collector?.close();
      await mock?.close();
    });

    it('exports the span of a chat and a stream: the caller as parent, the same id, tokens and status as the response, the access line and the metrics', async () => {
      const counted = { model_group: 'gpt-text', status_code: '200' };
      const requestsBefore = await counterSum(gateway.baseURL, 'torii_requests_total', counted);
      const inputTokensBefore = await counterSum(gateway.baseURL, 'torii_tokens_total', {
        model_group: 'gpt-text',
        type: 'input',
      });
      const client = new OpenAI({ baseURL: `${gateway.baseURL}/v1`, apiKey: e2eMasterKey, maxRetries: 0 });
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const { data, response } = await client.chat.completions
        .create(
          { model: 'gpt-text', messages: [{ role: 'user', content: 'Hello' }] },
          { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } },
        )
        .withResponse();
      const requestId = response.headers.get('x-torii-request-id') as string;
      const received = await collector.waitForSpan((span) => spanAttribute(span, 'torii.request_id') === requestId);
      expect(received.serviceName).toBe('torii-e2e');
      expect(received.headers['x-collector-key']).toBe('e2e-secret');
      const { span } = received;
      expect(span.traceId).toBe(traceId);
      expect(span.parentSpanId).toBe('00f067aa0ba902b7');
      expect(span.name).toBe('chat gpt-text');
      expect(spanAttribute(span, 'http.response.status_code')).toBe(200);
      expect(spanAttribute(span, 'gen_ai.usage.input_tokens')).toBe(data.usage?.prompt_tokens);
      expect(spanAttribute(span, 'gen_ai.usage.output_tokens')).toBe(data.usage?.completion_tokens);
      expect(spanAttribute(span, 'gen_ai.response.model')).toBe('text');
      // workerd's console lines reach wrangler's output after the response: wait for the line, not a while.
      await gateway.waitForOutput(requestId, 60_000);
      const line = accessLineOf(gateway.output(), requestId);
      expect(line).toMatchObject({
        requestId,
        status: 200,
        inputTokens: data.usage?.prompt_tokens,
        outputTokens: data.usage?.completion_tokens,
      });

      // A stream without a traceparent: a trace of its own, its time to first token on the span.
      const stream = await client.chat.completions
        .create({ model: 'gpt-text', messages: [{ role: 'user', content: 'Hello' }], stream: true })
        .withResponse();
      for await (const chunk of stream.data) void chunk;
      const streamId = stream.response.headers.get('x-torii-request-id') as string;
      const streamed = await collector.waitForSpan(
        (candidate) => spanAttribute(candidate, 'torii.request_id') === streamId,
      );
      expect(streamed.span.traceId).not.toBe(traceId);
      expect(streamed.span.parentSpanId).toBeUndefined();
      expect(spanAttribute(streamed.span, 'torii.stream')).toBe(true);
      expect(spanAttribute(streamed.span, 'torii.time_to_first_token_ms')).toBeTypeOf('number');
      await gateway.waitForOutput(streamId, 60_000);
      const streamLine = accessLineOf(gateway.output(), streamId);
      expect(spanAttribute(streamed.span, 'gen_ai.usage.output_tokens')).toBe(streamLine?.outputTokens);

      // The metrics counted both requests under their status, with the tokens the span and access lines carry (every
      // runtime serving /metrics; a Worker has none).
      if (requestsBefore === undefined || inputTokensBefore === undefined) return;
      expect((await counterSum(gateway.baseURL, 'torii_requests_total', counted)) ?? 0).toBe(requestsBefore + 2);
      const inputTokensAfter = await counterSum(gateway.baseURL, 'torii_tokens_total', {
        model_group: 'gpt-text',
        type: 'input',
      });
      expect(inputTokensAfter).toBe(
        inputTokensBefore + Number(spanAttribute(span, 'gen_ai.usage.input_tokens')) + Number(streamLine?.inputTokens),
      );
    });

    it('keeps serving while the collector fails, and exports the span of a refused request with its status', async () => {
      collector.answerWith(503);
      const whileCollectorFails = await fetch(`${gateway.baseURL}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${e2eMasterKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-text', messages: [{ role: 'user', content: 'Hello' }] }),
      });
      expect(whileCollectorFails.status).toBe(200);
      collector.answerWith(200);
      const unknownModel = await fetch(`${gateway.baseURL}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${e2eMasterKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'no-such-group', messages: [{ role: 'user', content: 'Hello' }] }),
      });
      expect(unknownModel.status).toBe(404);
      const requestId = unknownModel.headers.get('x-torii-request-id') as string;
      const received = await collector.waitForSpan((span) => spanAttribute(span, 'torii.request_id') === requestId);
      expect(spanAttribute(received.span, 'http.response.status_code')).toBe(404);
      expect(received.span.status.code).toBe(0);
    });
  });
}
