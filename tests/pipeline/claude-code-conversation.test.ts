import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { builtinProviders } from '../../providers/index.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { createGateway } from '../../src/gateway.ts';
import { checkAnthropicStreamGrammar } from '../conformance/dialect-golden/anthropic-stream-grammar.ts';
import { anthropicMessagesReassembler } from '../conformance/dialect-golden/dialect-entries.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { createReplayUpstream, type RecordedUpstreamCall } from './replay-upstream.ts';

/**
 * A Claude-Code-shaped conversation (cached system blocks, Claude Code's tools, thinking with signatures, parallel tool
 * calls, tool results as text, as blocks and as an error) through the real gateway app in-process: `createGateway`
 * with the built-in providers and the master-key authenticator; the only fake is the upstream client, which records
 * the request and replays a recorded provider stream.
 *
 * - To an OpenAI deployment the conversation is translated: the upstream gets an OpenAI chat request, and the client
 *   an Anthropic event stream that must follow Anthropic's documented grammar.
 * - To an Anthropic deployment it passes through: the upstream gets the client's body with only `model` changed and
 *   the client's `anthropic-beta`, and the client gets the upstream's stream byte for byte.
 */

type Block = { type: string } & Record<string, unknown>;
interface Conversation {
  model: string;
  system: { type: 'text'; text: string }[];
  tools: { name: string; description: string; input_schema: Record<string, unknown> }[];
  messages: { role: 'user' | 'assistant'; content: Block[] }[];
  metadata: { user_id: string };
  [field: string]: unknown;
}

const conversationText = readFileSync(new URL('./__fixtures__/claude-code-conversation.json', import.meta.url), 'utf8');
const conversation = JSON.parse(conversationText) as Conversation;
const providerFixture = (path: string): string =>
  readFileSync(new URL(`../../providers/${path}`, import.meta.url), 'utf8');

const masterKey = 'sk-torii-pipeline-master-key';
const openAIKey = 'sk-upstream-openai-key';
const anthropicKey = 'sk-ant-upstream-anthropic-key';
const anthropicBeta = 'claude-code-20250219,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14';
/** The model group of the fixture (`claude-sonnet-4-5`) goes to Anthropic; `gpt-5` to OpenAI. */
const openAIGroup = 'gpt-5';
const openAIModel = 'gpt-5-2025-08-07';
const anthropicModel = 'claude-sonnet-4-5-20250929';

const config = parseGatewayConfig({
  modelGroups: {
    [openAIGroup]: {
      deployments: [
        {
          provider: 'openai',
          model: openAIModel,
          baseURL: 'https://upstream.test/v1',
          apiKey: openAIKey,
          // OpenAI's reasoning models refuse `max_tokens`; the openai preset sends it unless told otherwise.
          options: { maxTokensField: 'max_completion_tokens' },
        },
      ],
    },
    [conversation.model]: {
      deployments: [
        { provider: 'anthropic', model: anthropicModel, baseURL: 'https://upstream.test/v1', apiKey: anthropicKey },
      ],
    },
  },
});

/** Posts a body to `/v1/messages` as Claude Code does, through a gateway whose upstream replays `streamText`. */
async function converse(body: string, streamText: string) {
  const upstream = createReplayUpstream(streamText);
  const { logger, lines } = recordingLogger();
  const gateway = createGateway({
    config,
    providers: builtinProviders,
    authenticator: createMasterKeyAuthenticator(masterKey),
    services: { upstreamFetch: upstream.upstreamFetch, logger },
  });
  // Claude Code calls the SDK's beta Messages API, which adds `?beta=true`.
  const response = await gateway.request('/v1/messages?beta=true', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': masterKey,
      'anthropic-version': '2023-06-01',
      'anthropic-beta': anthropicBeta,
      'user-agent': 'claude-cli/2.0.14 (external, cli)',
      'x-app': 'cli',
    },
    body,
  });
  const text = await response.text();
  expect(upstream.calls).toHaveLength(1);
  const call = upstream.calls[0] as RecordedUpstreamCall;
  return { response, text, call, logLines: lines };
}

/** Only the gateway's own upstream credentials and protocol headers leave it: no client key, no client identity. */
function expectNoClientHeadersLeak(call: RecordedUpstreamCall): void {
  expect(Object.values(call.init.headers).join('\n')).not.toContain(masterKey);
  const names = Object.keys(call.init.headers).map((name) => name.toLowerCase());
  expect(names).not.toContain('user-agent');
  expect(names).not.toContain('x-app');
}

/** Every key anywhere in a JSON value. */
function keysOf(value: unknown, keys = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keysOf(item, keys);
  else if (typeof value === 'object' && value !== null)
    for (const [key, item] of Object.entries(value)) keysOf(item, keys.add(key));
  return keys;
}

const blocksOf = (type: string): Block[] =>
  conversation.messages.flatMap((message) => message.content.filter((block) => block.type === type));

describe('a Claude Code conversation to an OpenAI deployment (translated)', () => {
  const body = JSON.stringify({ ...conversation, model: openAIGroup });

  it.each([
    ['tools', 'tool_use'],
    ['reasoning', 'end_turn'],
  ])(
    'replaying openai-compatible %s: the client gets a stream in Anthropic grammar (%s)',
    async (fixture, stopReason) => {
      const { response, text, logLines } = await converse(
        body,
        providerFixture(`openai-compatible/__fixtures__/${fixture}.chunks.txt`),
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(checkAnthropicStreamGrammar(text)).toEqual([]);
      const message = anthropicMessagesReassembler.fromStream(text);
      expect(message.stopReason).toBe(stopReason);
      expect(message.model).toBe(fixture === 'tools' ? 'gpt-4o-2024-08-06' : 'deepseek-reasoner');
      if (fixture === 'tools') {
        expect(message.toolCalls).toEqual([
          {
            id: 'call_Vq3nH8kLm2Xp9RtY4wZc7BdF',
            name: 'get_weather',
            input: { location: 'Paris, France', unit: 'celsius' },
          },
          {
            id: 'call_Jd5sK1fGh7Np3QwE9rTy2UiO',
            name: 'get_weather',
            input: { location: 'Tokyo, Japan', unit: 'celsius' },
          },
        ]);
        expect(message.usage).toMatchObject({
          output_tokens: 52,
          input_tokens: 1204 - 1024,
          cache_read_input_tokens: 1024,
        });
      } else {
        expect(message.reasoning).toBe(
          'Comparing 9.11 and 9.9: the whole parts are equal, so compare 0.11 with 0.90. 0.90 is larger.',
        );
        expect(message.text).toBe('9.9 is larger. Written as 9.90, its fractional part (0.90) beats 0.11.');
        expect(message.usage).toMatchObject({ output_tokens: 96, input_tokens: 81 - 64, cache_read_input_tokens: 64 });
      }
      expect(logLines.filter((line) => line.level !== 'info')).toEqual([]);
    },
  );

  it('sends the upstream an OpenAI chat request: system joined, functions, tool messages, reasoning effort', async () => {
    const { call } = await converse(body, providerFixture('openai-compatible/__fixtures__/tools.chunks.txt'));
    expect(call.url).toBe('https://upstream.test/v1/chat/completions');
    expect(call.init.method).toBe('POST');
    expect(call.init.headers.authorization).toBe(`Bearer ${openAIKey}`);
    expect(Object.keys(call.init.headers).filter((name) => name.toLowerCase().startsWith('anthropic-'))).toEqual([]);
    expectNoClientHeadersLeak(call);

    const upstream = JSON.parse(call.init.body ?? '') as Record<string, unknown> & { messages: unknown[] };
    expect(upstream).toMatchObject({
      model: openAIModel,
      max_completion_tokens: 32000,
      temperature: 1,
      user: conversation.metadata.user_id,
      // budget_tokens 4096: from 4096 up to 16383 is `medium` (anthropic-messages-to-canonical.ts).
      reasoning_effort: 'medium',
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(upstream.tools).toEqual(
      conversation.tools.map((tool) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
      })),
    );
    expect(conversation.tools.length).toBeGreaterThanOrEqual(10);

    const [firstUser, firstAssistant, , , , thirdAssistant, lastUser] = conversation.messages;
    const text = (message: { content: Block[] } | undefined, index: number) => message?.content[index]?.text;
    const toolCall = (id: string) => {
      const use = blocksOf('tool_use').find((block) => block.id === id);
      return { id, type: 'function', function: { name: use?.name, arguments: JSON.stringify(use?.input) } };
    };
    const resultText = (id: string) => {
      const result = blocksOf('tool_result').find((block) => block.tool_use_id === id);
      const content = result?.content as string | { text: string }[];
      return typeof content === 'string' ? content : content.map((part) => part.text).join('\n');
    };
    expect(upstream.messages).toEqual([
      { role: 'system', content: conversation.system.map((block) => block.text).join('\n\n') },
      {
        role: 'user',
        content: [
          { type: 'text', text: text(firstUser, 0) },
          { type: 'text', text: text(firstUser, 1) },
        ],
      },
      // Thinking is dropped; text stays; the parallel calls become tool_calls, answered right after, in order.
      {
        role: 'assistant',
        content: text(firstAssistant, 1),
        tool_calls: [toolCall('toolu_01Hx4N8QvR2mKjT7bWc9LpYs'), toolCall('toolu_01Bq7ZsV3nXkP9rWd2MtLhGe')],
      },
      {
        role: 'tool',
        tool_call_id: 'toolu_01Hx4N8QvR2mKjT7bWc9LpYs',
        content: `Error: ${resultText('toolu_01Hx4N8QvR2mKjT7bWc9LpYs')}`,
      },
      {
        role: 'tool',
        tool_call_id: 'toolu_01Bq7ZsV3nXkP9rWd2MtLhGe',
        content: resultText('toolu_01Bq7ZsV3nXkP9rWd2MtLhGe'),
      },
      // Only thinking and a call: no text, so OpenAI's `content: null`.
      { role: 'assistant', content: null, tool_calls: [toolCall('toolu_01Kd3FgH8jLmN2pQr5StUvWx')] },
      {
        role: 'tool',
        tool_call_id: 'toolu_01Kd3FgH8jLmN2pQr5StUvWx',
        content: resultText('toolu_01Kd3FgH8jLmN2pQr5StUvWx'),
      },
      {
        role: 'assistant',
        content: text(thirdAssistant, 1),
        tool_calls: [toolCall('toolu_01Mn6PqR9sTuV2wXy4ZaBcDe'), toolCall('toolu_01Tv8WxY2zAbC4dEf6GhIjKl')],
      },
      {
        role: 'tool',
        tool_call_id: 'toolu_01Mn6PqR9sTuV2wXy4ZaBcDe',
        content: resultText('toolu_01Mn6PqR9sTuV2wXy4ZaBcDe'),
      },
      {
        role: 'tool',
        tool_call_id: 'toolu_01Tv8WxY2zAbC4dEf6GhIjKl',
        content: resultText('toolu_01Tv8WxY2zAbC4dEf6GhIjKl'),
      },
      // The user's own words of the last turn follow its tool results.
      { role: 'user', content: text(lastUser, 2) },
    ]);

    // No thinking reaches OpenAI, and nothing Anthropic-only: no thinking text, no signature, no cache_control.
    const keys = keysOf(upstream);
    for (const key of ['thinking', 'signature', 'cache_control', 'budget_tokens', 'metadata', 'input_schema'])
      expect(keys.has(key), key).toBe(false);
    const wire = call.init.body ?? '';
    for (const block of blocksOf('thinking')) {
      expect(wire).not.toContain(String(block.thinking));
      expect(wire).not.toContain(String(block.signature));
    }
  });
});

describe('a Claude Code conversation to an Anthropic deployment (pass-through)', () => {
  const upstreamStream = providerFixture('anthropic/__fixtures__/thinking.chunks.txt');
  const anthropicStreamFixtures = readdirSync(new URL('../../providers/anthropic/__fixtures__/', import.meta.url))
    .filter((file) => file.endsWith('.chunks.txt'))
    .sort();

  it('the upstream gets the body byte-identical but for the model, with the client protocol headers', async () => {
    const { response, call } = await converse(conversationText, upstreamStream);
    expect(response.status).toBe(200);
    expect(call.url).toBe('https://upstream.test/v1/messages');
    expect(call.init.headers).toMatchObject({
      'x-api-key': anthropicKey,
      'anthropic-version': '2023-06-01',
      'anthropic-beta': anthropicBeta,
    });
    expect(call.init.headers.authorization).toBeUndefined();
    expectNoClientHeadersLeak(call);

    const expected = { ...conversation, model: anthropicModel };
    expect(JSON.parse(call.init.body ?? '')).toEqual(expected);
    // The gateway re-serialises the parsed body (`JSON.stringify({...body, model})`), so the wire text is the
    // compact form of the client's, keys in the client's order, `model` in its place.
    expect(call.init.body).toBe(JSON.stringify(expected));
  });

  // thinking.chunks.txt is this conversation's answer; every other recorded Anthropic stream must pass as well.
  it.each(anthropicStreamFixtures)("the client gets the upstream's stream byte for byte (%s)", async (fixture) => {
    const recorded = providerFixture(`anthropic/__fixtures__/${fixture}`);
    const { response, text } = await converse(conversationText, recorded);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // The tap re-frames every event as `event: <type>\ndata: <data>\n\n` (anthropic-messages-native-tap.ts). The
    // recorded streams are already in that form (LF line ends, an `event:` line for every event, one `data:` line
    // each), so they are compared as they are, with no normalisation on either side.
    expect(recorded).not.toContain('\r');
    expect(text).toBe(recorded);
    expect(checkAnthropicStreamGrammar(text)).toEqual([]);
  });
});
