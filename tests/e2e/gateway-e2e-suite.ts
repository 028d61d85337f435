import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { e2eEnvironment, e2eGatewayConfig, e2eMasterKey, readFixture } from './e2e-fixtures.ts';
import type { RunningGateway } from './gateway-process.ts';
import type { GatewayStarter } from './gateway-starters.ts';

interface OpenAIToolCall {
  id: string;
  function: { name: string; arguments: string };
}

const openaiText = readFixture<{
  choices: { message: { content: string } }[];
  usage: { prompt_tokens: number; completion_tokens: number };
}>('openai-compatible', 'text.json');
const openaiTools = readFixture<{ choices: { message: { tool_calls: OpenAIToolCall[] } }[] }>(
  'openai-compatible',
  'tools.json',
);
const anthropicText = readFixture<{ content: { type: string; text: string }[]; usage: Record<string, number> }>(
  'anthropic',
  'text.json',
);
const anthropicTools = readFixture<{ content: { type: string; name?: string; input?: unknown; text?: string }[] }>(
  'anthropic',
  'tools.json',
);
const rateLimited = readFixture<{ error: { message: string } }>('openai-compatible', 'error-429.json');
const overloaded = readFixture<{ error: { message: string } }>('anthropic', 'error-529.json');

async function collect(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  let text = '';
  const tools: { name: string; arguments: string }[] = [];
  const finishReasons: string[] = [];
  let usage: OpenAI.Completions.CompletionUsage | undefined;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      if (choice.delta.content) text += choice.delta.content;
      for (const call of choice.delta.tool_calls ?? []) {
        const entry = (tools[call.index] ??= { name: '', arguments: '' });
        if (call.function?.name) entry.name = call.function.name;
        if (call.function?.arguments) entry.arguments += call.function.arguments;
      }
      if (choice.finish_reason) finishReasons.push(choice.finish_reason);
    }
  }
  return { text, tools, finishReasons, usage, chunks };
}

const weatherTool: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};

/** The `/metrics` text, or undefined where the runtime serves none (a Worker). */
async function metricsText(gateway: RunningGateway): Promise<string | undefined> {
  const response = await fetch(`${gateway.baseURL}/metrics`);
  if (response.status === 404) return undefined;
  expect(response.status).toBe(200);
  return await response.text();
}

/** The value of the sample of `name` whose labels include `labels` (0 when there is none), whatever the label order. */
function sampleValue(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((pair) => [pair[1], pair[2]]),
    );
    if (Object.entries(labels).every(([label, value]) => found[label] === value)) return Number(match[3]);
  }
  return 0;
}

/** The access line of a request, once the gateway printed it (after the response, or the stream, ended). */
async function accessLineOf(gateway: RunningGateway, requestId: string): Promise<Record<string, unknown>> {
  expect(requestId).not.toBe('');
  const marker = `"message":"request","requestId":"${requestId}"`;
  await gateway.waitForOutput(marker);
  const lines = gateway
    .output()
    .split('\n')
    .filter((line) => line.includes(marker));
  expect(lines).toHaveLength(1);
  // wrangler may prefix a Worker's console lines; the JSON object is the rest of the line.
  return JSON.parse(lines[0]!.slice(lines[0]!.indexOf('{'))) as Record<string, unknown>;
}

/**
 * The end-to-end suite every runtime runs: the real openai SDK against the real gateway process, with the mock
 * upstream replaying recorded OpenAI and Anthropic fixtures.
 */
export function defineGatewayE2ESuite(runtime: string, start: GatewayStarter): void {
  describe(`gateway on ${runtime}`, () => {
    let mock: MockUpstream;
    let gateway: RunningGateway;
    let client: OpenAI;

    beforeAll(async () => {
      mock = await startMockUpstream();
      gateway = await start(e2eGatewayConfig(mock.url), e2eEnvironment);
      client = new OpenAI({ baseURL: `${gateway.baseURL}/v1`, apiKey: e2eMasterKey, maxRetries: 0, timeout: 20_000 });
    });

    afterAll(async () => {
      await gateway?.stop();
      await mock?.close();
    });

    it('answers a chat completion from an OpenAI-shaped upstream', async () => {
      const completion = await client.chat.completions.create({
        model: 'gpt-text',
        messages: [{ role: 'user', content: 'Hello' }],
      });
      expect(completion.choices[0]?.message.content).toBe(openaiText.choices[0]?.message.content);
      expect(completion.usage?.prompt_tokens).toBe(openaiText.usage.prompt_tokens);
      const sent = mock.requests.at(-1);
      expect(sent?.body.model).toBe('text');
      expect(sent?.headers.authorization).toBe('Bearer sk-mock-upstream');
    });

    it('streams from an OpenAI-shaped upstream, removing the usage chunk the client did not ask for', async () => {
      const stream = await client.chat.completions.create({
        model: 'gpt-text',
        stream: true,
        messages: [{ role: 'user', content: 'Hello' }],
      });
      const result = await collect(stream);
      expect(result.text).toBe(openaiText.choices[0]?.message.content);
      expect(result.finishReasons).toEqual(['stop']);
      expect(result.usage).toBeUndefined();
      expect(mock.requests.at(-1)?.body.stream_options).toEqual({ include_usage: true });
    });

    it('streams usage when the client asks for it', async () => {
      const stream = await client.chat.completions.create({
        model: 'gpt-text',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'Hello' }],
      });
      const result = await collect(stream);
      expect(result.usage?.prompt_tokens).toBeGreaterThan(0);
      expect(result.usage?.completion_tokens).toBeGreaterThan(0);
    });

    it('passes tool calls through from an OpenAI-shaped upstream, streamed and not', async () => {
      const completion = await client.chat.completions.create({
        model: 'gpt-tools',
        tools: [weatherTool],
        messages: [{ role: 'user', content: 'Weather?' }],
      });
      const expected = openaiTools.choices[0]?.message.tool_calls.map((call) => ({
        name: call.function.name,
        arguments: call.function.arguments,
      }));
      const calls = completion.choices[0]?.message.tool_calls?.map((call) => ({
        name: (call as OpenAIToolCall).function.name,
        arguments: (call as OpenAIToolCall).function.arguments,
      }));
      expect(calls).toEqual(expected);
      expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
      const streamed = await collect(
        await client.chat.completions.create({
          model: 'gpt-tools',
          stream: true,
          tools: [weatherTool],
          messages: [{ role: 'user', content: 'Weather?' }],
        }),
      );
      expect(
        streamed.tools.map((tool) => ({ name: tool.name, arguments: JSON.parse(tool.arguments) as unknown })),
      ).toEqual(expected?.map((call) => ({ name: call.name, arguments: JSON.parse(call.arguments) as unknown })));
    });

    it('translates a chat completion to and from Anthropic', async () => {
      const completion = await client.chat.completions.create({
        model: 'claude-text',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hello' },
        ],
      });
      expect(completion.choices[0]?.message.content).toBe(anthropicText.content[0]?.text);
      expect(completion.choices[0]?.finish_reason).toBe('stop');
      const usage = anthropicText.usage;
      expect(completion.usage?.prompt_tokens).toBe(
        (usage.input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0),
      );
      expect(completion.usage?.completion_tokens).toBe(usage.output_tokens);
      const sent = mock.requests.at(-1);
      expect(sent?.path).toBe('/v1/messages');
      expect(sent?.body.system).toBeDefined();
      expect(sent?.headers['x-api-key']).toBe('sk-mock-upstream');
    });

    it('streams from Anthropic as OpenAI chunks', async () => {
      const result = await collect(
        await client.chat.completions.create({
          model: 'claude-text',
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'Hello' }],
        }),
      );
      expect(result.text).toBe(anthropicText.content[0]?.text);
      expect(result.finishReasons).toEqual(['stop']);
      expect(result.usage?.completion_tokens).toBe(anthropicText.usage.output_tokens);
    });

    it('translates Anthropic tool use, streamed and not', async () => {
      const expected = anthropicTools.content
        .filter((block) => block.type === 'tool_use')
        .map((block) => ({ name: block.name, arguments: block.input }));
      const completion = await client.chat.completions.create({
        model: 'claude-tools',
        tools: [weatherTool],
        tool_choice: 'auto',
        messages: [{ role: 'user', content: 'Weather?' }],
      });
      const calls = completion.choices[0]?.message.tool_calls?.map((call) => ({
        name: (call as OpenAIToolCall).function.name,
        arguments: JSON.parse((call as OpenAIToolCall).function.arguments) as unknown,
      }));
      expect(calls).toEqual(expected);
      expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
      const streamed = await collect(
        await client.chat.completions.create({
          model: 'claude-tools',
          stream: true,
          tools: [weatherTool],
          messages: [{ role: 'user', content: 'Weather?' }],
        }),
      );
      expect(
        streamed.tools.map((tool) => ({ name: tool.name, arguments: JSON.parse(tool.arguments) as unknown })),
      ).toEqual(expected);
      expect(streamed.finishReasons).toEqual(['tool_calls']);
      const sent = mock.requests.at(-1);
      expect((sent?.body.tools as { name: string }[])[0]?.name).toBe('get_weather');
    });

    it('serves embeddings and lists model groups', async () => {
      const embeddings = await client.embeddings.create({ model: 'embedder', input: ['a', 'b'] });
      expect(embeddings.data.length).toBeGreaterThan(0);
      expect(Array.isArray(embeddings.data[0]?.embedding)).toBe(true);
      const models = [];
      for await (const model of client.models.list()) models.push(model.id);
      expect(models).toContain('gpt-text');
      expect(models).toContain('claude-tools');
    });

    it('passes legacy completions through to a deployment that serves them, and names one that does not', async () => {
      const completion = await client.completions.create({ model: 'gpt-text', prompt: 'Say this is a test' });
      expect(completion.choices[0]?.text).toBe('\n\nThis is indeed a test.');
      expect(completion.usage?.total_tokens).toBe(12);
      expect(mock.requests.at(-1)).toMatchObject({ path: '/v1/completions', body: { model: 'text' } });
      const stream = await client.completions.create({ model: 'gpt-text', prompt: 'Say this is a test', stream: true });
      let text = '';
      let usageSeen = false;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.text ?? '';
        if (chunk.usage) usageSeen = true;
      }
      expect(text).toBe('\n\nThis is indeed a test.');
      expect(usageSeen).toBe(false);
      expect(mock.requests.at(-1)?.body.stream_options).toEqual({ include_usage: true });
      const refused = await client.completions
        .create({ model: 'claude-text', prompt: 'x' })
        .catch((caught: unknown) => caught);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect((refused as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/claude-text\/0 \(anthropic\)/);
    });

    it('keeps the upstream message and status of upstream errors', async () => {
      const error = await client.chat.completions
        .create({ model: 'gpt-rate-limited', messages: [{ role: 'user', content: 'x' }] })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      expect((error as InstanceType<typeof OpenAI.RateLimitError>).message).toContain(rateLimited.error.message);
      expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')).toBe('7');
      const anthropicError = await client.chat.completions
        .create({ model: 'claude-overloaded', messages: [{ role: 'user', content: 'x' }] })
        .catch((caught: unknown) => caught);
      expect(anthropicError).toBeInstanceOf(OpenAI.APIError);
      expect((anthropicError as InstanceType<typeof OpenAI.APIError>).status).toBeGreaterThanOrEqual(500);
      expect((anthropicError as InstanceType<typeof OpenAI.APIError>).message).toContain(overloaded.error.message);
    });

    it('answers gateway-made errors in the OpenAI envelope', async () => {
      const unknownModel = await client.chat.completions
        .create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] })
        .catch((caught: unknown) => caught);
      expect(unknownModel).toBeInstanceOf(OpenAI.NotFoundError);
      expect((unknownModel as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
      const badKey = new OpenAI({ baseURL: `${gateway.baseURL}/v1`, apiKey: 'sk-wrong-key', maxRetries: 0 });
      const unauthorized = await badKey.chat.completions
        .create({ model: 'gpt-text', messages: [{ role: 'user', content: 'x' }] })
        .catch((caught: unknown) => caught);
      expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
      const malformed = await fetch(`${gateway.baseURL}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${e2eMasterKey}`, 'content-type': 'application/json' },
        body: '{"model": "gpt-text", "messages": [',
      });
      expect(malformed.status).toBe(400);
      const body = (await malformed.json()) as { error: Record<string, unknown> };
      expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
      const invalid = await client.chat.completions
        .create({ model: 'gpt-text', messages: [{ role: 'user', content: 'x' }], temperature: 7 })
        .catch((caught: unknown) => caught);
      expect(invalid).toBeInstanceOf(OpenAI.BadRequestError);
      expect((invalid as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('temperature');
    });

    it('answers 502 for an unreachable upstream and 504 for one that never answers', async () => {
      const unreachable = await client.chat.completions
        .create({ model: 'gpt-unreachable', messages: [{ role: 'user', content: 'x' }] })
        .catch((caught: unknown) => caught);
      expect((unreachable as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      const hanging = await client.chat.completions
        .create({ model: 'gpt-hang', messages: [{ role: 'user', content: 'x' }] })
        .catch((caught: unknown) => caught);
      expect((hanging as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
    });

    it('sets request id, overhead and Server-Timing headers', async () => {
      const response = await fetch(`${gateway.baseURL}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${e2eMasterKey}`,
          'content-type': 'application/json',
          'x-request-id': 'e2e-request-1',
        },
        body: JSON.stringify({ model: 'gpt-text', messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-request-id')).toBe('e2e-request-1');
      const overhead = response.headers.get('x-torii-overhead-ms');
      const timing = response.headers.get('server-timing') ?? '';
      if (overhead === null) {
        // workerd: its clock stands still during compute, so the gateway's own time is said to be unmeasured.
        expect(timing).toMatch(/^gateway;desc="[^"]+", upstream;dur=[\d.]+$/);
      } else {
        expect(Number(overhead)).toBeGreaterThanOrEqual(0);
        expect(timing).toMatch(new RegExp(`^gateway;dur=${overhead.replace('.', '\\.')}, upstream;dur=[\\d.]+$`));
      }
    });

    it('writes one access line per request that agrees with the response and the metrics', async () => {
      const metricsBefore = await metricsText(gateway);
      const response = await fetch(`${gateway.baseURL}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${e2eMasterKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-text', messages: [{ role: 'user', content: 'x' }] }),
      });
      const answer = (await response.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
      const requestId = response.headers.get('x-torii-request-id') ?? '';
      const line = await accessLineOf(gateway, requestId);
      expect(line).toMatchObject({
        level: 'info',
        message: 'request',
        requestId,
        keyId: 'master',
        clientApi: 'openai-chat',
        modelGroup: 'gpt-text',
        deployment: 'gpt-text/0',
        status: response.status,
        inputTokens: answer.usage.prompt_tokens,
        outputTokens: answer.usage.completion_tokens,
      });
      expect(new Date(String(line.time)).toISOString()).toBe(line.time);
      expect(JSON.stringify(line)).not.toContain(e2eMasterKey);

      const { data: stream, response: streamResponse } = await client.chat.completions
        .create({
          model: 'gpt-text',
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'x' }],
        })
        .withResponse();
      const streamed = await collect(stream);
      const streamId = streamResponse.headers.get('x-torii-request-id') ?? '';
      const streamLine = await accessLineOf(gateway, streamId);
      expect(streamLine).toMatchObject({
        stream: true,
        status: 200,
        inputTokens: streamed.usage?.prompt_tokens,
        outputTokens: streamed.usage?.completion_tokens,
      });
      expect(streamLine.timeToFirstTokenMs).toBeGreaterThanOrEqual(0);

      // Node and Deno serve /metrics (a Worker isolate keeps none): the two requests are in it, by status code.
      if (metricsBefore === undefined) return;
      const metricsAfter = (await metricsText(gateway)) ?? '';
      const byModel = { model_group: 'gpt-text', provider: 'openai' };
      const grew = (name: string, labels: Record<string, string>) =>
        sampleValue(metricsAfter, name, labels) - sampleValue(metricsBefore, name, labels);
      expect(grew('torii_requests_total', { ...byModel, client_api: 'openai-chat', status_code: '200' })).toBe(2);
      expect(grew('torii_tokens_total', { ...byModel, type: 'input' })).toBe(
        answer.usage.prompt_tokens + (streamed.usage?.prompt_tokens ?? 0),
      );
      expect(grew('torii_tokens_total', { ...byModel, type: 'output' })).toBe(
        answer.usage.completion_tokens + (streamed.usage?.completion_tokens ?? 0),
      );
      expect(grew('torii_time_to_first_token_seconds_count', byModel)).toBe(1);
      expect(metricsAfter).not.toMatch(/="none"/);
      expect(metricsAfter).toMatch(/^process_resident_memory_bytes \d+/m);
      expect(metricsAfter).toMatch(/^torii_usage_events_lost_total 0$/m);
    });

    it('ends a stream whose upstream breaks off with an error event, not a torn connection', async () => {
      const stream = await client.chat.completions.create({
        model: 'gpt-broken',
        stream: true,
        messages: [{ role: 'user', content: 'x' }],
      });
      let chunks = 0;
      const failure = await (async () => {
        for await (const chunk of stream) if (chunk.choices.length > 0) chunks++;
      })().catch((caught: unknown) => caught);
      expect(chunks).toBeGreaterThan(0);
      expect(failure).toBeInstanceOf(OpenAI.APIError);
      expect(String((failure as Error).message)).toMatch(/broke off/);
    });

    it.each(['gpt-slow', 'claude-slow'])(
      'cancels the upstream call when the client aborts a %s stream',
      async (model) => {
        const before = mock.abortedStreams;
        const controller = new AbortController();
        const stream = await client.chat.completions.create(
          { model, stream: true, messages: [{ role: 'user', content: 'x' }] },
          { signal: controller.signal },
        );
        let received = 0;
        try {
          for await (const chunk of stream) {
            if (chunk.choices.length > 0) received++;
            if (received === 2) controller.abort();
          }
        } catch (error) {
          // The SDK may end the iteration quietly or throw an abort error; both mean the client went away.
          expect(String(error)).toMatch(/abort/i);
        }
        expect(received).toBe(2);
        const deadline = Date.now() + 5_000;
        while (mock.abortedStreams === before && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 50));
        expect(mock.abortedStreams).toBe(before + 1);
      },
    );
  });
}
