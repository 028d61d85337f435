import Anthropic from '@anthropic-ai/sdk';
import { generateKeyPairSync } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderTranslator } from '../../src/canonical/index.ts';
import { builtinProviders } from '../../providers/index.ts';
import {
  mockAwsAccessKeyId,
  mockUpstreamApiKey,
  startMockUpstream,
  type MockUpstream,
} from '../mock-upstream/mock-upstream.ts';
import { e2eMasterKey, readFixture } from './e2e-fixtures.ts';
import type { RunningGateway } from './gateway-process.ts';
import type { GatewayStarter } from './gateway-starters.ts';

/** A 1x1 PNG: what an image question carries. */
const pixel = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** One cloud provider as the suite drives it: its deployments, and what its translated requests must carry. */
interface CloudProvider {
  /** Model groups are `<name>-text`, `<name>-tools` and `<name>-rate-limited-<client>`. */
  name: string;
  translator: ProviderTranslator;
  /** Where its recorded answers are (`providers/<folder>/__fixtures__/`). */
  fixtures: string;
  /** A folder inside `__fixtures__/` that holds its answers (Claude on Bedrock's, beside Converse's), if any. */
  answerFolder?: string;
  /** The recorded case that answers 429. */
  rateLimitedCase: string;
  deployment(mockUrl: string, model: string): Record<string, unknown>;
  /** The upstream model of its embeddings group (the mock answers each provider's recorded embeddings). */
  embeddingModel: string;
  /** A key the provider's own request format uses for a tool result, and for an image. */
  toolResultKey: string;
  imageKey: string;
}

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const serviceAccount = (mockUrl: string) => ({
  type: 'service_account',
  project_id: 'torii-e2e',
  private_key_id: 'e2e-key-1',
  private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  client_email: 'torii-e2e@torii-e2e.iam.gserviceaccount.com',
  token_uri: `${mockUrl}/token`,
});
const vertexOptions = (mockUrl: string) => ({
  project: 'torii-e2e',
  location: 'us-central1',
  serviceAccount: serviceAccount(mockUrl),
});

const translators = builtinProviders.translators;
const cloudProviders: CloudProvider[] = [
  {
    name: 'gemini',
    embeddingModel: 'gemini-embedding-001',
    translator: translators.gemini!,
    fixtures: 'gemini',
    rateLimitedCase: 'error-429',
    deployment: (mockUrl, model) => ({
      provider: 'gemini',
      model,
      baseURL: `${mockUrl}/v1beta`,
      apiKey: mockUpstreamApiKey,
    }),
    toolResultKey: '"functionResponse"',
    imageKey: '"inlineData"',
  },
  {
    name: 'vertex',
    embeddingModel: 'text-embedding-005',
    translator: translators.vertex!,
    fixtures: 'gemini',
    rateLimitedCase: 'error-429',
    deployment: (mockUrl, model) => ({ provider: 'vertex', model, baseURL: mockUrl, options: vertexOptions(mockUrl) }),
    toolResultKey: '"functionResponse"',
    imageKey: '"inlineData"',
  },
  {
    name: 'vertex-anthropic',
    embeddingModel: '',
    translator: translators['vertex-anthropic']!,
    fixtures: 'anthropic',
    rateLimitedCase: 'error-429',
    deployment: (mockUrl, model) => ({
      provider: 'vertex-anthropic',
      model,
      baseURL: mockUrl,
      options: vertexOptions(mockUrl),
    }),
    toolResultKey: '"tool_result"',
    imageKey: '"media_type"',
  },
  {
    name: 'bedrock',
    embeddingModel: 'cohere.embed-v4:0',
    translator: translators.bedrock!,
    fixtures: 'bedrock',
    rateLimitedCase: 'error-429-throttling',
    deployment: (mockUrl, model) => ({
      provider: 'bedrock',
      model,
      baseURL: mockUrl,
      options: { region: 'us-east-1', accessKeyId: mockAwsAccessKeyId, secretAccessKey: 'mock-secret-access-key' },
    }),
    toolResultKey: '"toolResult"',
    imageKey: '"image"',
  },
  {
    name: 'bedrock-anthropic',
    embeddingModel: '',
    translator: translators['bedrock-anthropic']!,
    fixtures: 'bedrock',
    answerFolder: 'anthropic/',
    rateLimitedCase: 'error-429-throttling',
    deployment: (mockUrl, model) => ({
      provider: 'bedrock-anthropic',
      model,
      baseURL: mockUrl,
      options: { region: 'us-east-1', accessKeyId: mockAwsAccessKeyId, secretAccessKey: 'mock-secret-access-key' },
    }),
    toolResultKey: '"tool_result"',
    imageKey: '"media_type"',
  },
  {
    name: 'azure',
    embeddingModel: 'text-embedding-3-small',
    translator: translators['azure-openai']!,
    fixtures: 'azure',
    rateLimitedCase: 'error-429',
    deployment: (mockUrl, model) => ({
      provider: 'azure',
      model,
      baseURL: mockUrl,
      options: {
        tenantId: 'torii-e2e',
        clientId: 'torii-e2e-client',
        clientSecret: 'mock-client-secret',
        authorityHost: mockUrl,
      },
    }),
    toolResultKey: '"tool_call_id"',
    imageKey: '"image_url"',
  },
  {
    name: 'cohere',
    embeddingModel: 'embed-v4.0',
    translator: translators.cohere!,
    fixtures: 'cohere',
    rateLimitedCase: 'error-429',
    deployment: (mockUrl, model) => ({ provider: 'cohere', model, baseURL: mockUrl, apiKey: mockUpstreamApiKey }),
    toolResultKey: '"tool_call_id"',
    imageKey: '"image_url"',
  },
];

/** The gateway config: three model groups per cloud provider, every deployment pointing at the mock. */
function cloudGatewayConfig(mockUrl: string): Record<string, unknown> {
  const modelGroups: Record<string, unknown> = {};
  for (const provider of cloudProviders) {
    modelGroups[`${provider.name}-text`] = { deployments: [provider.deployment(mockUrl, 'text')] };
    modelGroups[`${provider.name}-tools`] = { deployments: [provider.deployment(mockUrl, 'tools')] };
    if (provider.embeddingModel !== '')
      modelGroups[`${provider.name}-embed`] = { deployments: [provider.deployment(mockUrl, provider.embeddingModel)] };
    // One group per client: a 429 with a wait opens its deployment's circuit for that wait.
    for (const client of ['openai', 'anthropic'])
      modelGroups[`${provider.name}-rate-limited-${client}`] = {
        deployments: [provider.deployment(mockUrl, provider.rateLimitedCase)],
      };
  }
  return { server: { upstreamTimeoutMs: 10_000 }, routing: { retry: { retries: 0 } }, modelGroups };
}

/** The answer text the provider's recorded `text` case holds, as its own translator reads it. */
function recordedText(provider: CloudProvider): string {
  const answer = provider.translator.parseChatResponse(
    readFixture(provider.fixtures, `${provider.answerFolder ?? ''}text.json`),
  );
  return answer.choices[0]?.text ?? '';
}

/** The upstream error message of the provider's recorded 429. */
function recordedRateLimitMessage(provider: CloudProvider): string {
  const body = readFixture<Record<string, unknown>>(provider.fixtures, `${provider.rateLimitedCase}.json`);
  const nested = body.error as { message?: string } | undefined;
  return nested?.message ?? (body.message as string) ?? (body.Message as string);
}

const weatherTool: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};

/**
 * The cloud-provider suite every runtime runs: for each provider (Gemini, Vertex AI's Gemini and Claude, Bedrock,
 * Azure OpenAI with an Entra ID service principal, Cohere) the real `openai` SDK on chat completions and the real
 * `@anthropic-ai/sdk` on messages get text, a stream, a tool round trip, an image question and a mapped error, from
 * the mock speaking that provider's wire format. Vertex AI signs its service-account JWT and Azure fetches its Entra
 * token on the runtime under test, from the mock's token endpoints.
 */
export function defineCloudProvidersE2ESuite(runtime: string, start: GatewayStarter): void {
  describe(`cloud providers on ${runtime}`, () => {
    let mock: MockUpstream;
    let gateway: RunningGateway;
    let openai: OpenAI;
    let anthropic: Anthropic;

    beforeAll(async () => {
      mock = await startMockUpstream();
      gateway = await start(cloudGatewayConfig(mock.url), { TORII_MASTER_KEY: e2eMasterKey });
      openai = new OpenAI({ baseURL: `${gateway.baseURL}/v1`, apiKey: e2eMasterKey, maxRetries: 0, timeout: 30_000 });
      anthropic = new Anthropic({ baseURL: gateway.baseURL, apiKey: e2eMasterKey, maxRetries: 0, timeout: 30_000 });
    });

    afterAll(async () => {
      await gateway?.stop();
      await mock?.close();
    });

    describe.each(cloudProviders)('$name', (provider) => {
      const text = recordedText(provider);

      it('answers text and a stream to the openai SDK', async () => {
        const whole = await openai.chat.completions.create({
          model: `${provider.name}-text`,
          messages: [{ role: 'user', content: 'Hello' }],
        });
        expect(whole.choices[0]?.message.content).toBe(text);
        expect(whole.usage?.total_tokens).toBeGreaterThan(0);
        const stream = await openai.chat.completions.create({
          model: `${provider.name}-text`,
          messages: [{ role: 'user', content: 'Hello' }],
          stream: true,
          stream_options: { include_usage: true },
        });
        let streamed = '';
        let usage: OpenAI.Completions.CompletionUsage | undefined | null;
        for await (const chunk of stream) {
          streamed += chunk.choices[0]?.delta.content ?? '';
          if (chunk.usage) usage = chunk.usage;
        }
        expect(streamed).toBe(text);
        expect(usage?.total_tokens).toBeGreaterThan(0);
      });

      it('makes a tool round trip, the result reaching the upstream in its own format', async () => {
        const first = await openai.chat.completions.create({
          model: `${provider.name}-tools`,
          messages: [{ role: 'user', content: 'Weather in Paris and Tokyo?' }],
          tools: [weatherTool],
        });
        const calls = (first.choices[0]?.message.tool_calls ?? []).filter((call) => call.type === 'function');
        expect(calls.length).toBeGreaterThan(0);
        expect(first.choices[0]?.finish_reason).toBe('tool_calls');
        const second = await openai.chat.completions.create({
          model: `${provider.name}-text`,
          tools: [weatherTool],
          messages: [
            { role: 'user', content: 'Weather in Paris and Tokyo?' },
            { role: 'assistant', content: null, tool_calls: calls },
            ...calls.map((call) => ({ role: 'tool' as const, tool_call_id: call.id, content: '{"celsius":21}' })),
          ],
        });
        expect(second.choices[0]?.message.content).toBe(text);
        const sent = JSON.stringify(mock.requests.at(-1)?.body);
        expect(sent).toContain(provider.toolResultKey);
        expect(sent).toContain('celsius');
      });

      it('carries an image question to the upstream', async () => {
        const answer = await openai.chat.completions.create({
          model: `${provider.name}-text`,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is in this picture?' },
                { type: 'image_url', image_url: { url: `data:image/png;base64,${pixel}` } },
              ],
            },
          ],
        });
        expect(answer.choices[0]?.message.content).toBe(text);
        const sent = JSON.stringify(mock.requests.at(-1)?.body);
        expect(sent).toContain(provider.imageKey);
        expect(sent).toContain(pixel);
      });

      it('grounds an answer in documents where the provider can, and names `documents` where it cannot', async () => {
        const documents = [
          { id: 'doc-1', data: { title: 'Tall penguins', snippet: 'Emperor penguins are the tallest.' } },
        ];
        const asked = openai.chat.completions.create({
          model: `${provider.name}-text`,
          messages: [{ role: 'user', content: 'Which penguins are tallest?' }],
          // Not an OpenAI parameter: the SDK sends it as an extra body field.
          ...({ documents } as Record<string, unknown>),
        });
        // Azure OpenAI serves chat completions natively: the client's body, documents and all, is its to judge.
        const passedThrough = provider.translator.nativeDialects.includes('openai-chat');
        if (provider.translator.chatFeatures.includes('documents') || passedThrough) {
          expect((await asked).choices[0]?.message.content).toBe(text);
          expect(JSON.stringify(mock.requests.at(-1)?.body)).toContain('Emperor penguins are the tallest.');
        } else {
          const error = await asked.then(
            () => undefined,
            (caught: unknown) => caught,
          );
          expect(error).toBeInstanceOf(OpenAI.APIError);
          expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
          expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe('documents');
        }
      });

      it("maps the upstream's rate limit to a 429 in each client's envelope, keeping its message", async () => {
        const message = recordedRateLimitMessage(provider);
        const openaiError = await openai.chat.completions
          .create({ model: `${provider.name}-rate-limited-openai`, messages: [{ role: 'user', content: 'Hello' }] })
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        expect(openaiError).toBeInstanceOf(OpenAI.APIError);
        expect((openaiError as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
        expect((openaiError as Error).message).toContain(message.slice(0, 40));
        const anthropicError = await anthropic.messages
          .create({
            model: `${provider.name}-rate-limited-anthropic`,
            max_tokens: 64,
            messages: [{ role: 'user', content: 'Hi' }],
          })
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        expect(anthropicError).toBeInstanceOf(Anthropic.APIError);
        expect((anthropicError as InstanceType<typeof Anthropic.APIError>).status).toBe(429);
        expect(JSON.stringify((anthropicError as InstanceType<typeof Anthropic.APIError>).error)).toContain(
          'rate_limit_error',
        );
      });

      // Claude on Vertex AI has no embeddings.
      if (provider.embeddingModel !== '')
        it('answers embeddings to the openai SDK, which asks for base64 by default', async () => {
          const answer = await openai.embeddings.create({ model: `${provider.name}-embed`, input: ['hello world'] });
          const vector = answer.data[0]?.embedding ?? [];
          expect(vector.length).toBeGreaterThan(0);
          // The SDK decoded the base64 the gateway sent into the upstream's own floats.
          expect(vector.every((value) => Number.isFinite(value) && Math.abs(value) < 10)).toBe(true);
          expect(answer.model).not.toBe('');
        });

      it('answers the @anthropic-ai/sdk: text, a stream, a tool round trip and an image', async () => {
        const whole = await anthropic.messages.create({
          model: `${provider.name}-text`,
          max_tokens: 256,
          messages: [{ role: 'user', content: 'Hello' }],
        });
        expect(whole.content.map((block) => (block.type === 'text' ? block.text : '')).join('')).toBe(text);
        const streamed = await anthropic.messages
          .stream({ model: `${provider.name}-text`, max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }] })
          .finalText();
        expect(streamed).toBe(text);
        if (provider.translator.nativeDialects.includes('anthropic-messages')) {
          // Claude on Vertex AI and on Bedrock: the client's own body passed through, the model moved into the URL.
          const passed = mock.requests.at(-1);
          expect(passed?.path).toMatch(/:streamRawPredict$|\/invoke-with-response-stream$/);
          expect(passed?.body.model).toBeUndefined();
          expect(passed?.body.anthropic_version).toMatch(/^(vertex|bedrock)-/);
        }
        const tools = await anthropic.messages.create({
          model: `${provider.name}-tools`,
          max_tokens: 256,
          tools: [
            { name: 'get_weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } },
          ],
          messages: [{ role: 'user', content: 'Weather in Paris?' }],
        });
        expect(tools.stop_reason).toBe('tool_use');
        const uses = tools.content.filter((block) => block.type === 'tool_use');
        expect(uses.length).toBeGreaterThan(0);
        // The round trip's second leg: the results go back as tool_result blocks, in the provider's own format.
        const followed = await anthropic.messages.create({
          model: `${provider.name}-text`,
          max_tokens: 256,
          tools: [
            { name: 'get_weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } },
          ],
          messages: [
            { role: 'user', content: 'Weather in Paris?' },
            { role: 'assistant', content: tools.content },
            {
              role: 'user',
              content: uses.map((use) => ({
                type: 'tool_result' as const,
                tool_use_id: use.id,
                content: '{"celsius":21}',
              })),
            },
          ],
        });
        expect(followed.content.map((block) => (block.type === 'text' ? block.text : '')).join('')).toBe(text);
        const resultSent = JSON.stringify(mock.requests.at(-1)?.body);
        expect(resultSent).toContain('celsius');
        expect(resultSent).toContain(provider.toolResultKey);
        const image = await anthropic.messages.create({
          model: `${provider.name}-text`,
          max_tokens: 256,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: pixel } },
                { type: 'text', text: 'What is in this picture?' },
              ],
            },
          ],
        });
        expect(image.content.length).toBeGreaterThan(0);
        expect(JSON.stringify(mock.requests.at(-1)?.body)).toContain(pixel);
      });
    });

    it('fetched tokens once per process, not once per request', () => {
      const grants = mock.tokenRequests.map((request) => request.form.grant_type);
      // Vertex AI's two translators share one service account's token; Azure's service principal has its own.
      // Per process: a Node cluster has two workers; workerd and Deno one isolate.
      expect(
        grants.filter((grant) => grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer').length,
      ).toBeLessThanOrEqual(2);
      expect(grants.filter((grant) => grant === 'client_credentials').length).toBeLessThanOrEqual(2);
      expect(grants.length).toBeGreaterThan(0);
    });
  });
}
