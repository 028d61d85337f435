import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinProviders } from '../../providers/index.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { createGateway } from '../../src/gateway.ts';
import type { GatewayLogger } from '../../src/services.ts';
import type { UsageEvent } from '../../src/usage/usage-event.ts';
import { hostileUpstreamApiKey, startHostileUpstream, type HostileUpstream } from '../chaos/hostile-upstream.ts';

const masterKey = 'sk-absurd-usage-master-key';
/** $1 per million tokens in and out: the most one request can cost once clamped is 2 x 10M tokens = $20. */
const pricing = { input: 1, output: 1 };

// Defect (issue 8, item 13): usage from the upstream was trusted blindly. An upstream reporting 1e300 tokens stored
// cost_usd = 1e297 in the ledger and would have poisoned the key's budget and the rate limiter. Through the real
// gateway app and a real (hostile) upstream, pass-through and translation, streamed and not.
describe('absurd usage reported by an upstream (createGateway, hostile upstream)', { timeout: 60_000 }, () => {
  let upstream: HostileUpstream;
  let gateway: ReturnType<typeof createGateway>;
  const events: UsageEvent[] = [];
  const warnings: { message: string; fields: Record<string, unknown> | undefined }[] = [];

  beforeAll(async () => {
    upstream = await startHostileUpstream();
    const logger: GatewayLogger = {
      info() {},
      warn: (message, fields) => warnings.push({ message, fields }),
      error() {},
    };
    const deployment = (provider: string, path: string) => ({
      deployments: [
        { provider, model: 'absurd-usage', baseURL: `${upstream.url}${path}`, apiKey: hostileUpstreamApiKey, pricing },
      ],
    });
    gateway = createGateway({
      config: parseGatewayConfig(
        { modelGroups: { openai: deployment('openai', '/v1'), anthropic: deployment('anthropic', '/v1') } },
        {},
      ),
      providers: builtinProviders,
      authenticator: createMasterKeyAuthenticator(masterKey),
      services: { logger },
      accounting: { recordUsage: (event) => events.push(event) },
    });
  }, 60_000);

  afterAll(async () => {
    await upstream?.close();
  });

  it.each([
    ['openai', false],
    ['openai', true],
    ['anthropic', false],
    ['anthropic', true],
  ])('records clamped tokens and a finite, bounded cost for %s (stream: %s)', async (group, stream) => {
    const requestId = `absurd-${group}-${stream}`;
    const response = await gateway.request('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ model: group, stream, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    await response.text();
    const event = events.find((candidate) => candidate.clientRequestId === requestId);
    expect(event).toBeDefined();
    expect(event!.usageSource).toBe('provider-adjusted');
    for (const count of [event!.inputTokens, event!.outputTokens, event!.cachedInputTokens, event!.reasoningTokens])
      expect(count).toBeLessThanOrEqual(10_000_000);
    expect(Number.isFinite(event!.costUsd)).toBe(true);
    expect(event!.costUsd).toBeLessThanOrEqual(20);
    const warning = warnings.find((line) => line.fields?.requestId === event?.requestId);
    expect(warning?.message).toBe('Upstream usage out of bounds; clamped before accounting');
    expect(warning?.fields).toMatchObject({ provider: group, deployment: `${group}/0`, upstreamModel: 'absurd-usage' });
  });
});
