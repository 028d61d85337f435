import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { createEmptyTestDatabase } from '../services/test-database.ts';
import { accountingMasterKey, createVirtualKey, requiredServiceUrl } from './accounting-harness.ts';
import { readFixture } from './e2e-fixtures.ts';
import type { RunningGateway } from './gateway-process.ts';

/** Starts one gateway with the accounting config (accounting-harness.ts) on a database. */
export type AccountingGatewayStarter = (options: { mockUrl: string; databaseUrl: string }) => Promise<RunningGateway>;

const openaiText = readFixture<{ choices: { message: { content: string } }[] }>('openai-compatible', 'text.json');
const anthropicText = readFixture<{ content: { text: string }[] }>('anthropic', 'text.json');
const nativeText = 'Checking Paris and Tokyo (東京) — one moment 🌤';

const weatherTool: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  strict: false,
};

const City = z.object({ city: z.string(), country: z.string(), population: z.number() });

function functionCalls(response: OpenAI.Responses.Response): OpenAI.Responses.ResponseFunctionToolCall[] {
  return response.output.filter(
    (item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === 'function_call',
  );
}

/**
 * The Responses API suite every runtime runs, with a database (stored responses): the real `openai` SDK against the
 * real gateway, to a native Responses upstream (OpenAI-shaped, passed through), an OpenAI-shaped server without the
 * Responses API (translated to chat) and Anthropic (translated).
 */
export function defineResponsesE2ESuite(runtime: string, start: AccountingGatewayStarter): void {
  describe(`the Responses API on ${runtime}`, { timeout: 120_000 }, () => {
    let mock: MockUpstream;
    let database: { url: string; drop(): Promise<void> };
    let gateway: RunningGateway;
    let client: OpenAI;

    beforeAll(async () => {
      requiredServiceUrl('TORII_TEST_DATABASE_URL');
      mock = await startMockUpstream();
      database = await createEmptyTestDatabase();
      gateway = await start({ mockUrl: mock.url, databaseUrl: database.url });
      client = new OpenAI({
        baseURL: `${gateway.baseURL}/v1`,
        apiKey: accountingMasterKey,
        maxRetries: 0,
        timeout: 20_000,
      });
    }, 180_000);

    afterAll(async () => {
      await gateway?.stop();
      await mock?.close();
      await database?.drop();
    });

    it.each([
      ['gpt-text', nativeText, '/v1/responses'],
      ['compat-text', openaiText.choices[0]?.message.content, '/v1/chat/completions'],
      ['claude-text', anthropicText.content[0]?.text, '/v1/messages'],
    ])('answers responses.create and responses.stream on %s', async (model, expected, upstreamPath) => {
      const created = await client.responses.create({ model, input: 'Hello', instructions: 'Be brief.' });
      expect(created.output_text).toBe(expected);
      expect(created.status).toBe('completed');
      expect(created.usage?.input_tokens).toBeGreaterThan(0);
      expect(mock.requests.at(-1)?.path).toBe(upstreamPath);
      const stream = client.responses.stream({ model, input: 'Hello' });
      const events: string[] = [];
      stream.on('event', (event) => events.push(event.type));
      const streamed = await stream.finalResponse();
      expect(streamed.output_text).toBe(expected);
      expect(events[0]).toBe('response.created');
      expect(events.at(-1)).toBe('response.completed');
    });

    it.each(['gpt-text', 'claude-text'])(
      'stores a streamed response on %s by the time its last event arrives, so the next turn can continue it at once',
      async (model) => {
        const streamed = await client.responses.stream({ model, input: 'Hello' }).finalResponse();
        expect(streamed.status).toBe('completed');
        // No wait: the stream ends with response.completed, and the answer must be stored before that event leaves.
        const retrieved = await client.responses.retrieve(streamed.id);
        expect(retrieved.id).toBe(streamed.id);
        const next = await client.responses.create({ model, input: 'And then?', previous_response_id: streamed.id });
        expect(next.object).toBe('response');
        if (model === 'claude-text') expect(next.previous_response_id).toBe(streamed.id);
        else expect(mock.requests.at(-1)?.body).toMatchObject({ previous_response_id: streamed.id });
      },
    );

    it.each(['compat-tools', 'claude-tools'])(
      'runs a tool loop through previous_response_id on %s, the gateway keeping the conversation',
      async (model) => {
        const first = await client.responses.create({ model, input: 'Weather in Paris?', tools: [weatherTool] });
        const calls = functionCalls(first);
        expect(calls.length).toBeGreaterThan(0);
        const second = await client.responses.create({
          model,
          previous_response_id: first.id,
          tools: [weatherTool],
          input: calls.map((call) => ({
            type: 'function_call_output' as const,
            call_id: call.call_id,
            output: '18°C',
          })),
        });
        expect(second.previous_response_id).toBe(first.id);
        const sent = mock.requests.at(-1)?.body;
        const transcript = JSON.stringify(sent);
        expect(transcript).toContain('Weather in Paris?');
        for (const call of calls) expect(transcript).toContain(call.call_id);
        expect(transcript).toContain('18°C');
        // The stored conversation reads back: the first response, and its input items.
        const retrieved = await client.responses.retrieve(first.id);
        expect(retrieved.output).toEqual(first.output);
        const items = await client.responses.inputItems.list(first.id);
        expect(JSON.stringify(items.data)).toContain('Weather in Paris?');
      },
    );

    it('passes a tool loop through to a native Responses upstream, on the deployment that made the response', async () => {
      const first = await client.responses.create({ model: 'gpt-tools', input: 'Weather?', tools: [weatherTool] });
      expect(functionCalls(first).length).toBe(2);
      const second = await client.responses.create({
        model: 'gpt-tools',
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: functionCalls(first)[0]!.call_id, output: '18°C' }],
      });
      expect(mock.requests.at(-1)).toMatchObject({ path: '/v1/responses', body: { previous_response_id: first.id } });
      expect(second.object).toBe('response');
      const retrieved = await client.responses.retrieve(first.id);
      expect(retrieved.id).toBe(first.id);
      expect(mock.requests.at(-1)?.path).toBe(`/v1/responses/${first.id}`);
    });

    it.each(['gpt-json', 'compat-json', 'claude-json'])(
      'parses a zod text format with responses.parse on %s',
      async (model) => {
        const parsed = await client.responses.parse({
          model,
          input: 'The biggest city of France, as JSON.',
          text: { format: zodTextFormat(City, 'city') },
        });
        expect(parsed.output_parsed).toEqual({ city: 'Paris', country: 'France', population: 2102650 });
      },
    );

    it("keeps another key away from a key's stored responses: no read, no continuation, no deletion", async () => {
      const alice = await createVirtualKey(gateway, { name: 'responses-alice' });
      const mallory = await createVirtualKey(gateway, { name: 'responses-mallory' });
      const asAlice = new OpenAI({ baseURL: `${gateway.baseURL}/v1`, apiKey: alice.key, maxRetries: 0 });
      const asMallory = new OpenAI({ baseURL: `${gateway.baseURL}/v1`, apiKey: mallory.key, maxRetries: 0 });
      for (const model of ['compat-text', 'gpt-text']) {
        const own = await asAlice.responses.create({ model, input: 'A secret plan' });
        for (const attempt of [
          () => asMallory.responses.retrieve(own.id),
          () => asMallory.responses.inputItems.list(own.id),
          () => asMallory.responses.create({ model, input: 'And then?', previous_response_id: own.id }),
          () => asMallory.responses.delete(own.id),
          () => client.responses.retrieve(own.id),
        ]) {
          const refused = await attempt().catch((error: unknown) => error);
          expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
        }
        expect((await asAlice.responses.retrieve(own.id)).id).toBe(own.id);
        await asAlice.responses.delete(own.id);
        await expect(asAlice.responses.retrieve(own.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      }
    });

    it('stores nothing for store: false', async () => {
      const unstored = await client.responses.create({ model: 'compat-text', input: 'Hello', store: false });
      expect((unstored as unknown as { store: boolean }).store).toBe(false);
      await expect(client.responses.retrieve(unstored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      const continued = await client.responses
        .create({ model: 'compat-text', input: 'More', previous_response_id: unstored.id })
        .catch((error: unknown) => error);
      expect(continued).toBeInstanceOf(OpenAI.NotFoundError);
    });

    it('refuses a built-in tool for a deployment without it, naming it', async () => {
      const refused = await client.responses
        .create({ model: 'compat-text', input: 'Search', tools: [{ type: 'web_search' }] })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect((refused as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('web_search');
    });
  });
}
