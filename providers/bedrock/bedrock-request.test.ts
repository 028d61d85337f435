import { describe, expect, it } from 'vitest';
import type { CanonicalChatRequest, UpstreamTarget } from '../../src/canonical/index.ts';
import { buildBedrockChatRequest, toConverseBody } from './bedrock-request.ts';
import { toBedrockDocumentName, toBedrockToolId } from './bedrock-request-messages.ts';
import { validateBedrockOptions } from './bedrock-options.ts';

const claude = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const chat = (overrides: Partial<CanonicalChatRequest> = {}): CanonicalChatRequest => ({
  model: 'group',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
  stream: false,
  streamIncludeUsage: false,
  ...overrides,
});
const target = (overrides: Partial<UpstreamTarget> = {}): UpstreamTarget => ({
  providerName: 'bedrock',
  baseURL: '',
  model: claude,
  apiKey: undefined,
  headers: {},
  options: { region: 'us-east-1', accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
  ...overrides,
});
const body = (request: CanonicalChatRequest, model = claude) => toConverseBody(request, model, {});

describe('buildBedrockChatRequest', () => {
  it('calls converse on the region endpoint, or converse-stream for a stream', async () => {
    expect((await buildBedrockChatRequest(chat(), target())).url).toBe(
      'https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse',
    );
    const streamed = await buildBedrockChatRequest(chat({ stream: true }), target());
    expect(streamed.url).toMatch(/\/converse-stream$/);
    expect(streamed.headers.accept).toBe('application/vnd.amazon.eventstream');
  });

  it('sends a Bearer API key when there are no access keys', async () => {
    const request = await buildBedrockChatRequest(
      chat(),
      target({ apiKey: 'ABSK123', options: { region: 'us-east-1' } }),
    );
    expect(request.headers.authorization).toBe('Bearer ABSK123');
    expect(request.headers['x-amz-date']).toBeUndefined();
  });

  it('refuses to send without credentials or without an endpoint (a configuration error)', async () => {
    await expect(buildBedrockChatRequest(chat(), target({ options: { region: 'us-east-1' } }))).rejects.toMatchObject({
      status: 500,
      code: 'invalid_provider_options',
    });
    await expect(buildBedrockChatRequest(chat(), target({ options: {}, apiKey: 'k' }))).rejects.toMatchObject({
      status: 500,
    });
  });

  it('reads the signing region from an AWS base URL', async () => {
    const request = await buildBedrockChatRequest(
      chat(),
      target({
        baseURL: 'https://bedrock-runtime.ap-southeast-2.amazonaws.com',
        options: { accessKeyId: 'A', secretAccessKey: 'S' },
      }),
    );
    expect(request.headers.authorization).toContain('/ap-southeast-2/bedrock/aws4_request');
  });
});

describe('toConverseBody', () => {
  it('maps system messages, sampling settings and top_k', () => {
    expect(
      body(
        chat({
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'system', content: 'Answer in French.' },
            { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
          ],
          maxTokens: 100,
          temperature: 0.5,
          topP: 0.9,
          topK: 40,
          stop: ['END'],
          seed: 7,
        }),
      ),
    ).toEqual({
      system: [{ text: 'Be brief.' }, { text: 'Answer in French.' }],
      messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
      inferenceConfig: { maxTokens: 100, temperature: 0.5, topP: 0.9, stopSequences: ['END'] },
      additionalModelRequestFields: { top_k: 40 },
    });
    expect(body(chat({ topK: 40 }), 'us.amazon.nova-pro-v1:0').additionalModelRequestFields).toEqual({
      inferenceConfig: { topK: 40 },
    });
  });

  it('merges tool results into one user turn, after the assistant toolUse blocks', () => {
    const converse = body(
      chat({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
          {
            role: 'assistant',
            content: [],
            toolCalls: [
              { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
              { id: 'call.2', name: 'get_weather', arguments: '' },
            ],
          },
          { role: 'tool', toolCallId: 'call_1', content: '18°C' },
          { role: 'tool', toolCallId: 'call.2', content: '' },
          { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
        ],
        tools: [{ name: 'get_weather', parameters: { properties: { city: { type: 'string' } } } }],
      }),
    );
    expect(converse.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather?' }] },
      {
        role: 'assistant',
        content: [
          { toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Paris' } } },
          { toolUse: { toolUseId: 'call_2', name: 'get_weather', input: {} } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'call_1', content: [{ text: '18°C' }] } },
          { toolResult: { toolUseId: 'call_2', content: [{ text: '(empty)' }] } },
          { text: 'Thanks' },
        ],
      },
    ]);
    expect(converse.toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'get_weather',
            inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } },
          },
        },
      ],
    });
  });

  it('maps tool choices; none sends no tools unless the history needs them declared', () => {
    const tools = [{ name: 'lookup', parameters: {} }];
    expect(body(chat({ tools, toolChoice: { type: 'required' } })).toolConfig?.toolChoice).toEqual({ any: {} });
    expect(body(chat({ tools, toolChoice: { type: 'tool', name: 'lookup' } })).toolConfig?.toolChoice).toEqual({
      tool: { name: 'lookup' },
    });
    expect(body(chat({ tools, toolChoice: { type: 'none' } })).toolConfig).toBeUndefined();
    const history = chat({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Go' }] },
        { role: 'assistant', content: [], toolCalls: [{ id: 't1', name: 'lookup', arguments: '{}' }] },
        { role: 'tool', toolCallId: 't1', content: 'done' },
      ],
    });
    expect(body(history).toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'lookup', inputSchema: { json: { type: 'object' } } } }],
    });
    expect(() => body(chat({ tools, toolChoice: { type: 'tool', name: 'other' } }))).toThrow(/not among the tools/);
  });

  it('turns a JSON schema response format into a forced tool', () => {
    const converse = body(
      chat({
        responseFormat: { type: 'json_schema', name: 'person', schema: { properties: { name: { type: 'string' } } } },
      }),
    );
    expect(converse.toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'torii_json_response',
            description: expect.any(String) as string,
            inputSchema: { json: { type: 'object', properties: { name: { type: 'string' } } } },
          },
        },
      ],
      toolChoice: { tool: { name: 'torii_json_response' } },
    });
    expect(() => body(chat({ responseFormat: { type: 'json_object' }, reasoningEffort: 'low' }))).toThrow(
      expect.objectContaining({ status: 400, param: 'response_format' }) as Error,
    );
  });

  it('maps reasoning to Claude extended thinking, and refuses it for other families', () => {
    expect(body(chat({ reasoningEffort: 'medium' }))).toMatchObject({
      inferenceConfig: { maxTokens: 4096 + 8192 },
      additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 8192 } },
    });
    expect(body(chat({ reasoningEffort: 'high', maxTokens: 3000 })).additionalModelRequestFields).toEqual({
      thinking: { type: 'enabled', budget_tokens: 2999 },
    });
    expect(() => body(chat({ reasoningEffort: 'low', maxTokens: 500 }))).toThrow(
      expect.objectContaining({ param: 'max_tokens' }) as Error,
    );
    expect(() => body(chat({ reasoningEffort: 'low' }), 'meta.llama3-70b-instruct-v1:0')).toThrow(
      expect.objectContaining({ param: 'reasoning_effort' }) as Error,
    );
    expect(body(chat({ reasoningEffort: 'none' })).additionalModelRequestFields).toBeUndefined();
  });

  it('sends images and documents as bytes, refusing links and unknown types', () => {
    const converse = body(
      chat({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', url: 'data:image/PNG;base64,iVBORw0KGgo=' },
              { type: 'file', mediaType: 'application/pdf', data: 'JVBERi0=', filename: 'Q3_report.final.pdf' },
              { type: 'file', mediaType: 'text/plain', data: 'aGk=', filename: 'Q3 report final.txt' },
            ],
          },
        ],
      }),
    );
    expect(converse.messages[0]?.content).toEqual([
      { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } },
      { document: { format: 'pdf', name: 'Q3 report final', source: { bytes: 'JVBERi0=' } } },
      { document: { format: 'txt', name: 'Q3 report final (2)', source: { bytes: 'aGk=' } } },
    ]);
    const image = (url: string) => chat({ messages: [{ role: 'user', content: [{ type: 'image', url }] }] });
    expect(() => body(image('https://example.com/cat.png'))).toThrow(
      expect.objectContaining({
        status: 400,
        param: 'messages.[0].content.[0]',
        message: expect.stringMatching(/bytes/) as string,
      }) as Error,
    );
    expect(() => body(image('data:image/tiff;base64,AAAA'))).toThrow(/png, jpeg, gif and webp/);
    const file = (part: { mediaType: string; data?: string; url?: string }) =>
      chat({ messages: [{ role: 'user', content: [{ type: 'file', ...part }] }] });
    expect(() => body(file({ mediaType: 'application/pdf', url: 'https://example.com/a.pdf' }))).toThrow(
      /inline bytes/,
    );
    expect(() => body(file({ mediaType: 'application/zip', data: 'UEs=' }))).toThrow(/not application\/zip/);
  });

  it('sends a system-only conversation as its user turn, and refuses temperatures above 1', async () => {
    expect(body(chat({ messages: [{ role: 'system', content: 'Say hi.' }] }))).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Say hi.' }] }],
    });
    await expect(buildBedrockChatRequest(chat({ temperature: 1.5 }), target())).rejects.toMatchObject({
      param: 'temperature',
    });
  });
});

describe('names Converse accepts', () => {
  it('document names keep letters, digits, single spaces, hyphens, parentheses and brackets', () => {
    expect(toBedrockDocumentName('a__b..c[1](x)-y.docx', new Set())).toBe('a b c[1](x)-y');
    expect(toBedrockDocumentName(undefined, new Set())).toBe('document');
    expect(toBedrockDocumentName('日本語.pdf', new Set())).toBe('document');
  });

  it('tool ids fit [a-zA-Z0-9_-]{1,64}, long ones kept distinct', () => {
    const long = 'x'.repeat(70);
    expect(toBedrockToolId(long)).toHaveLength(64);
    expect(toBedrockToolId(long)).not.toBe(toBedrockToolId(`${long}y`));
    expect(toBedrockToolId('call:1')).toBe('call_1');
  });
});

describe('validateBedrockOptions', () => {
  it('checks the region and that access key halves come together', () => {
    expect(
      validateBedrockOptions({ region: 'us-east-1', accessKeyId: 'A', secretAccessKey: 'S', sessionToken: 'T' }),
    ).toEqual([]);
    expect(validateBedrockOptions({ region: 'Virginia' })).toEqual(['region: must be an AWS region such as us-east-1']);
    expect(validateBedrockOptions({ accessKeyId: 'A' })).toEqual(['secretAccessKey: required with accessKeyId']);
    expect(validateBedrockOptions({ embeddingInputType: 'query' })[0]).toMatch(/^embeddingInputType:/);
  });
});
