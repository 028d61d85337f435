import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { e2eEnvironment, e2eGatewayConfig, e2eMasterKey, readFixture } from './e2e-fixtures.ts';
import type { RunningGateway } from './gateway-process.ts';
import type { GatewayStarter } from './gateway-starters.ts';

const anthropicText = readFixture<{ content: { text: string }[]; usage: Record<string, number> }>(
  'anthropic',
  'text.json',
);
const openaiText = readFixture<{
  choices: { message: { content: string } }[];
  usage: { prompt_tokens: number; completion_tokens: number };
}>('openai-compatible', 'text.json');
const openaiTools = readFixture<{
  choices: { message: { tool_calls: { id: string; function: { name: string; arguments: string } }[] } }[];
}>('openai-compatible', 'tools.json');

const weatherTool: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Current weather',
  input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
};

function textOf(message: Anthropic.Message): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

/**
 * The Anthropic Messages suite every runtime runs: the real `@anthropic-ai/sdk` against the real gateway process,
 * to an Anthropic-shaped upstream (pass-through) and to an OpenAI-shaped one (translated), with the mock replaying
 * recorded fixtures.
 */
export function defineAnthropicMessagesE2ESuite(runtime: string, start: GatewayStarter): void {
  describe(`Anthropic Messages on ${runtime}`, () => {
    let mock: MockUpstream;
    let gateway: RunningGateway;
    let client: Anthropic;

    beforeAll(async () => {
      mock = await startMockUpstream();
      gateway = await start(e2eGatewayConfig(mock.url), e2eEnvironment);
      client = new Anthropic({ baseURL: gateway.baseURL, apiKey: e2eMasterKey, maxRetries: 0, timeout: 20_000 });
    });

    afterAll(async () => {
      await gateway?.stop();
      await mock?.close();
    });

    it('passes a message through to an Anthropic upstream: only the model changes, the beta header goes along', async () => {
      const body = {
        model: 'claude-text',
        max_tokens: 64,
        system: [{ type: 'text' as const, text: 'Be brief.', cache_control: { type: 'ephemeral' as const } }],
        messages: [{ role: 'user' as const, content: 'Hello' }],
      };
      const response = await client.messages
        .create(body, { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } })
        .withResponse();
      expect(textOf(response.data)).toBe(anthropicText.content[0]?.text);
      expect(response.data.usage.input_tokens).toBe(anthropicText.usage.input_tokens);
      expect(response.response.headers.get('request-id')).toMatch(/.+/);
      const sent = mock.requests.at(-1);
      expect(sent?.path).toBe('/v1/messages');
      expect(sent?.body).toEqual({ ...body, model: 'text' });
      expect(sent?.headers['anthropic-beta']).toBe('context-1m-2025-08-07');
      expect(sent?.headers['x-api-key']).toBe('sk-mock-upstream');
    });

    it('streams from an Anthropic upstream with messages.stream, usage in message_start and message_delta', async () => {
      const stream = client.messages.stream({
        model: 'claude-text',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Hello' }],
      });
      const events: string[] = [];
      stream.on('streamEvent', (event) => events.push(event.type));
      const message = await stream.finalMessage();
      expect(textOf(message)).toBe(anthropicText.content[0]?.text);
      expect(message.usage.input_tokens).toBeGreaterThan(0);
      expect(message.usage.output_tokens).toBeGreaterThan(0);
      expect(events[0]).toBe('message_start');
      expect(events.at(-1)).toBe('message_stop');
    });

    it('answers from an OpenAI-shaped upstream, translated into an Anthropic message', async () => {
      const message = await client.messages.create({
        model: 'gpt-text',
        max_tokens: 64,
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'Hello' }],
      });
      expect(message.type).toBe('message');
      expect(message.id).toMatch(/^msg_/);
      expect(textOf(message)).toBe(openaiText.choices[0]?.message.content);
      expect(message.stop_reason).toBe('end_turn');
      expect(message.usage.input_tokens).toBe(openaiText.usage.prompt_tokens);
      expect(message.usage.output_tokens).toBe(openaiText.usage.completion_tokens);
      const sent = mock.requests.at(-1);
      expect(sent?.path).toBe('/v1/chat/completions');
      expect(sent?.body.messages).toEqual([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello' },
      ]);
    });

    it('streams from an OpenAI-shaped upstream in Anthropic event grammar, usage estimated up front and exact at the end', async () => {
      const stream = client.messages.stream({
        model: 'gpt-text',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Hello' }],
      });
      let startUsage: Anthropic.Usage | undefined;
      stream.on('streamEvent', (event) => {
        if (event.type === 'message_start') startUsage = event.message.usage;
      });
      const message = await stream.finalMessage();
      expect(textOf(message)).toBe(openaiText.choices[0]?.message.content);
      expect(startUsage?.input_tokens).toBeGreaterThan(0);
      expect(message.usage.input_tokens).toBe(openaiText.usage.prompt_tokens);
      expect(message.usage.output_tokens).toBe(openaiText.usage.completion_tokens);
      expect(mock.requests.at(-1)?.body.stream_options).toEqual({ include_usage: true });
    });

    it('runs a tool loop through an OpenAI-shaped upstream: tool_use out, tool_result back in', async () => {
      const first = await client.messages.create({
        model: 'gpt-tools',
        max_tokens: 256,
        tools: [weatherTool],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
      });
      expect(first.stop_reason).toBe('tool_use');
      const calls = first.content.filter((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
      const expected = openaiTools.choices[0]?.message.tool_calls ?? [];
      expect(calls.map((call) => call.name)).toEqual(expected.map((call) => call.function.name));
      expect(calls.map((call) => call.input)).toEqual(expected.map((call) => JSON.parse(call.function.arguments)));
      expect(mock.requests.at(-1)?.body).toMatchObject({
        tools: [{ type: 'function', function: { name: 'get_weather' } }],
        parallel_tool_calls: false,
      });
      await client.messages.create({
        model: 'gpt-tools',
        max_tokens: 256,
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: calls.map((call) => ({
              type: 'tool_result' as const,
              tool_use_id: call.id,
              content: '18°C, sunny',
            })),
          },
        ],
      });
      const messages = mock.requests.at(-1)?.body.messages as Record<string, unknown>[];
      expect(messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: calls.at(-1)?.id, content: '18°C, sunny' });
      expect(messages[1]?.role).toBe('assistant');
      const replayed = messages[1]?.tool_calls as { id: string; function: { arguments: string } }[];
      expect(replayed.map((call) => call.id)).toEqual(calls.map((call) => call.id));
      expect(replayed.map((call) => JSON.parse(call.function.arguments) as unknown)).toEqual(
        calls.map((call) => call.input),
      );
    });

    it('streams tool calls from an OpenAI-shaped upstream as tool_use blocks the SDK assembles', async () => {
      const message = await client.messages
        .stream({
          model: 'gpt-tools',
          max_tokens: 256,
          tools: [weatherTool],
          messages: [{ role: 'user', content: 'Weather in Paris?' }],
        })
        .finalMessage();
      const calls = message.content.filter((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
      const expected = openaiTools.choices[0]?.message.tool_calls ?? [];
      expect(calls.map((call) => call.input)).toEqual(expected.map((call) => JSON.parse(call.function.arguments)));
      expect(message.stop_reason).toBe('tool_use');
    });

    it('counts tokens: forwarded to an Anthropic upstream, estimated for others', async () => {
      const forwarded = await client.messages.countTokens({
        model: 'claude-text',
        messages: [{ role: 'user', content: 'Hello there' }],
      });
      const sent = mock.requests.at(-1);
      expect(sent?.path).toBe('/v1/messages/count_tokens');
      expect(sent?.body.model).toBe('text');
      expect(forwarded.input_tokens).toBe(JSON.stringify(sent?.body).length);
      const estimated = await client.messages
        .countTokens({ model: 'gpt-text', messages: [{ role: 'user', content: 'Hello there' }] })
        .withResponse();
      expect(estimated.data.input_tokens).toBeGreaterThan(0);
      expect(estimated.response.headers.get('x-torii-token-count')).toBe('estimate');
    });

    it.each(['claude-slow', 'gpt-slow'])(
      'cancels the upstream call when the client aborts a %s message stream',
      async (model) => {
        const before = mock.abortedStreams;
        const controller = new AbortController();
        const stream = client.messages.stream(
          { model, max_tokens: 64, messages: [{ role: 'user', content: 'x' }] },
          { signal: controller.signal },
        );
        let deltas = 0;
        stream.on('text', () => {
          if (++deltas === 2) controller.abort();
        });
        await stream.finalMessage().catch((error: unknown) => expect(String(error)).toMatch(/abort/i));
        expect(deltas).toBeGreaterThanOrEqual(2);
        const deadline = Date.now() + 10_000;
        while (mock.abortedStreams === before && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 50));
        expect(mock.abortedStreams).toBe(before + 1);
      },
    );

    it("answers every gateway error in Anthropic's envelope, which the SDK raises as its own error classes", async () => {
      const unauthorized = new Anthropic({ baseURL: gateway.baseURL, apiKey: 'sk-wrong', maxRetries: 0 });
      await expect(
        unauthorized.messages.create({
          model: 'claude-text',
          max_tokens: 8,
          messages: [{ role: 'user', content: 'x' }],
        }),
      ).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
      const unknown = await client.messages
        .create({ model: 'no-such-model', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
        .catch((error: unknown) => error);
      expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
      expect((unknown as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({
        type: 'error',
        error: { type: 'not_found_error' },
      });
      const invalid = await client.messages
        .create({ model: 'claude-text', messages: [{ role: 'user', content: 'x' }] } as never)
        .catch((error: unknown) => error);
      expect(invalid).toBeInstanceOf(Anthropic.BadRequestError);
      expect((invalid as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringContaining('max_tokens') as unknown },
      });
      const overloaded = await client.messages
        .create({ model: 'claude-overloaded', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
        .catch((error: unknown) => error);
      expect(overloaded).toBeInstanceOf(Anthropic.APIError);
      expect((overloaded as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error' });
    });
  });
}
