import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinProviders } from '../../providers/index.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { createGateway } from '../../src/gateway.ts';
import { createAccessLog } from '../../src/observability/access-log.ts';
import { createGatewayPrometheusMetrics } from '../../src/observability/gateway-metrics.ts';
import { renderPrometheusText } from '../../src/observability/prometheus-text.ts';
import { e2eGatewayConfig, e2eMasterKey } from '../e2e/e2e-fixtures.ts';
import { mockUpstreamApiKey, startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';

/*
 * One request, three views: the access line, the Prometheus metrics and the response agree on the request id, the
 * tokens and the status (the OpenAI-compatible fixture reports 19 prompt and 10 completion tokens). The gateway is the
 * real one with the built-in providers, against the local mock upstream.
 */

let mock: MockUpstream;

beforeAll(async () => {
  mock = await startMockUpstream();
});

afterAll(async () => {
  await mock?.close();
});

function observedGateway(options: { clockAdvancesDuringCompute?: boolean } = {}) {
  const lines: string[] = [];
  const metrics = createGatewayPrometheusMetrics();
  const accessLog = createAccessLog({ level: 'info', write: (line) => lines.push(line) });
  const app = createGateway({
    config: parseGatewayConfig(e2eGatewayConfig(mock.url), { MOCK_UPSTREAM_KEY: mockUpstreamApiKey }),
    providers: builtinProviders,
    authenticator: createMasterKeyAuthenticator(e2eMasterKey),
    services: { metrics, ...(accessLog === undefined ? {} : { accessLog }), ...options },
  });
  const chat = (body: Record<string, unknown>, key = e2eMasterKey) =>
    app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': 'client-1' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }], ...body }),
    });
  return {
    chat,
    accessLines: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    exposition: () => renderPrometheusText(metrics.families),
  };
}

describe('a request observed', () => {
  it('writes one access line that agrees with the response and the metrics', async () => {
    const gateway = observedGateway();
    const response = await gateway.chat({ model: 'gpt-text' });
    const answer = (await response.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    const [line, ...others] = gateway.accessLines();
    expect(others).toEqual([]);
    expect(line).toMatchObject({
      level: 'info',
      message: 'request',
      requestId: response.headers.get('x-torii-request-id'),
      clientRequestId: 'client-1',
      keyId: 'master',
      clientApi: 'openai-chat',
      operation: 'chat',
      stream: false,
      modelGroup: 'gpt-text',
      provider: 'openai',
      deployment: 'gpt-text/0',
      status: 200,
      inputTokens: answer.usage.prompt_tokens,
      outputTokens: answer.usage.completion_tokens,
      usageSource: 'provider',
    });
    expect(new Date(String(line?.time)).toISOString()).toBe(line?.time);
    expect(line?.latencyMs).toBeGreaterThanOrEqual(0);
    expect(line?.overheadMs).toBeGreaterThanOrEqual(0);
    expect(line).not.toHaveProperty('timeToFirstTokenMs');
    expect(JSON.stringify(line)).not.toContain(e2eMasterKey);
    const text = gateway.exposition();
    expect(text).toContain(
      'torii_requests_total{operation="chat",client_api="openai-chat",model_group="gpt-text",provider="openai",status_code="200"} 1',
    );
    expect(text).toContain(`torii_tokens_total{model_group="gpt-text",provider="openai",type="input"} 19`);
    expect(text).toContain(`torii_tokens_total{model_group="gpt-text",provider="openai",type="output"} 10`);
    expect(text).not.toContain('"none"');
  });

  it('writes a stream’s line when the stream ended, with its time to first token', async () => {
    const gateway = observedGateway();
    const response = await gateway.chat({ model: 'gpt-text', stream: true });
    await response.text();
    const [line] = gateway.accessLines();
    expect(line).toMatchObject({
      requestId: response.headers.get('x-torii-request-id'),
      stream: true,
      status: 200,
      inputTokens: 19,
      outputTokens: 10,
    });
    expect(line?.timeToFirstTokenMs).toBeGreaterThanOrEqual(0);
    expect(gateway.exposition()).toMatch(
      /^torii_time_to_first_token_seconds_count\{model_group="gpt-text",provider="openai"\} 1$/m,
    );
  });

  it('leaves out what a request that failed before routing does not have, never a placeholder', async () => {
    const gateway = observedGateway();
    const response = await gateway.chat({ model: 'gpt-text' }, 'sk-wrong');
    expect(response.status).toBe(401);
    const [line] = gateway.accessLines();
    expect(line).toMatchObject({ status: 401, inputTokens: 0, outputTokens: 0, usageSource: 'none' });
    expect(line).not.toHaveProperty('modelGroup');
    expect(line).not.toHaveProperty('keyId');
    const text = gateway.exposition();
    expect(text).toContain('torii_requests_total{operation="chat",client_api="openai-chat",status_code="401"} 1');
    expect(text).not.toMatch(/none/);
  });

  it('reports no overhead where the clock stands still during compute (workerd)', async () => {
    const gateway = observedGateway({ clockAdvancesDuringCompute: false });
    const response = await gateway.chat({ model: 'gpt-text' });
    expect(response.headers.get('x-torii-overhead-ms')).toBeNull();
    expect(response.headers.get('server-timing')).toMatch(/^gateway;desc="[^"]+", upstream;dur=[\d.]+$/);
    const [line] = gateway.accessLines();
    expect(line).not.toHaveProperty('overheadMs');
    expect(gateway.exposition()).toMatch(/^torii_overhead_seconds_count{operation="chat"} 0$/m);
  });
});
