import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { mockUpstreamApiKey } from '../mock-upstream/mock-upstream.ts';

const providersDirectory = fileURLToPath(new URL('../../providers/', import.meta.url));

/** Reads a provider's recorded fixture as JSON. */
export function readFixture<T = Record<string, unknown>>(provider: string, name: string): T {
  return JSON.parse(readFileSync(`${providersDirectory}${provider}/__fixtures__/${name}`, 'utf8')) as T;
}

/** The master key every e2e gateway runs with. */
export const e2eMasterKey = 'sk-torii-e2e-master-key';

/** The gateway config of the e2e suite: one model group per upstream fixture case, all pointing at the mock. */
export function e2eGatewayConfig(mockUrl: string): Record<string, unknown> {
  const openai = (model: string, baseURL = `${mockUrl}/v1`) => ({
    deployments: [{ provider: 'openai', model, baseURL, apiKey: '${MOCK_UPSTREAM_KEY}' }],
  });
  const anthropic = (model: string) => ({
    deployments: [{ provider: 'anthropic', model, baseURL: `${mockUrl}/v1`, apiKey: '${MOCK_UPSTREAM_KEY}' }],
  });
  return {
    server: { upstreamTimeoutMs: 1500 },
    modelGroups: {
      'gpt-text': openai('text'),
      'gpt-tools': openai('tools'),
      'gpt-slow': openai('slow-stream'),
      'gpt-broken': openai('broken-stream'),
      'gpt-hang': openai('hang'),
      'gpt-rate-limited': openai('error-429'),
      'gpt-bad-request': openai('error-400'),
      'gpt-unreachable': openai('text', 'http://127.0.0.1:9/v1'),
      'claude-text': anthropic('text'),
      'claude-tools': anthropic('tools'),
      'claude-slow': anthropic('slow-stream'),
      'claude-overloaded': anthropic('error-529'),
      embedder: openai('text-embedding-3-small'),
    },
  };
}

/** Environment the gateway needs for the e2e config's `${...}` references. */
export const e2eEnvironment = { MOCK_UPSTREAM_KEY: mockUpstreamApiKey, TORII_MASTER_KEY: e2eMasterKey };
