import { describe, expect, it } from 'vitest';
import type { CanonicalChatRequest, UpstreamTarget } from '../../src/canonical/index.ts';
import { isGatewayError } from '../../src/errors.ts';
import { buildGeminiEmbeddingsRequest } from './gemini-embeddings.ts';
import { validateGeminiOptions } from './gemini-options.ts';
import {
  buildGeminiChatRequest,
  buildGeminiGenerateContentBody,
  buildGeminiHealthCheckRequest,
} from './gemini-request.ts';
import { encodeToolCallId, skipThoughtSignatureValidator } from './gemini-tool-call-id.ts';

const target: UpstreamTarget = {
  providerName: 'gemini',
  baseURL: 'https://generativelanguage.googleapis.com/v1beta',
  model: 'gemini-2.5-flash',
  apiKey: 'AIza-test-key',
  headers: {},
  options: {},
};

const request = (overrides: Partial<CanonicalChatRequest> = {}): CanonicalChatRequest => ({
  model: 'fast',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
  stream: false,
  streamIncludeUsage: false,
  ...overrides,
});

const body = (overrides: Partial<CanonicalChatRequest> = {}, model = 'gemini-2.5-flash', options = {}) =>
  buildGeminiGenerateContentBody(request(overrides), model, options);

function thrown(action: () => unknown): { status: number; param: string | null; message: string } {
  try {
    action();
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

describe('buildGeminiChatRequest', () => {
  it('posts to generateContent with the key in x-goog-api-key, never in the URL', () => {
    const upstream = buildGeminiChatRequest(request(), { ...target, headers: { 'X-Extra': '1' } });
    expect(upstream.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
    );
    expect(upstream.url).not.toContain('AIza');
    expect(upstream.headers).toEqual({
      'content-type': 'application/json',
      'x-goog-api-key': 'AIza-test-key',
      'x-extra': '1',
    });
    expect(JSON.parse(upstream.body ?? '')).toEqual({ contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] });
  });

  it('streams through streamGenerateContent?alt=sse and keeps a models/ prefix', () => {
    const upstream = buildGeminiChatRequest(request({ stream: true }), { ...target, model: 'models/gemini-2.5-pro' });
    expect(upstream.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
    );
  });

  it('checks the model with GET models/{model} for health, with the key', () => {
    expect(buildGeminiHealthCheckRequest(target)).toEqual({
      url: 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash',
      method: 'GET',
      headers: { 'x-goog-api-key': 'AIza-test-key' },
      body: undefined,
    });
  });
});

describe('buildGeminiGenerateContentBody', () => {
  it('puts system and developer messages in systemInstruction and roles in user/model turns', () => {
    const built = body({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Hello!' }], toolCalls: [] },
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: [{ type: 'text', text: 'Bye' }] },
      ],
    });
    expect(built.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] });
    expect(built.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ text: 'Hello!' }] },
      { role: 'user', parts: [{ text: 'Bye' }] },
    ]);
  });

  it('sends a system-only conversation as the user turn', () => {
    expect(body({ messages: [{ role: 'system', content: 'Say hi.' }] })).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Say hi.' }] }],
    });
  });

  it('sends data URLs inline and https/gs URLs as file data, inferring the MIME type from the extension', () => {
    const built = body({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=' },
            { type: 'image', url: 'https://example.com/cat.JPG?size=large' },
            { type: 'file', mediaType: 'application/pdf', url: 'gs://bucket/report.pdf' },
            { type: 'file', mediaType: 'application/pdf', data: 'JVBERi0=' },
          ],
        },
      ],
    });
    expect(built.contents[0]?.parts).toEqual([
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.JPG?size=large' } },
      { fileData: { mimeType: 'application/pdf', fileUri: 'gs://bucket/report.pdf' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
    ]);
  });

  it('answers 400 naming the part for a media URL whose type cannot be known, or of another scheme', () => {
    const unknown = thrown(() =>
      body({ messages: [{ role: 'user', content: [{ type: 'image', url: 'https://example.com/picture' }] }] }),
    );
    expect(unknown).toMatchObject({ status: 400, param: 'messages.[0].content.[0]' });
    const plainHttp = thrown(() =>
      body({ messages: [{ role: 'user', content: [{ type: 'image', url: 'http://example.com/a.png' }] }] }),
    );
    expect(plainHttp).toMatchObject({ status: 400, param: 'messages.[0].content.[0]' });
  });

  it('sends parallel calls back with the signature on its own part, and names each function response', () => {
    const signed = encodeToolCallId({
      geminiId: undefined,
      responseId: 'r1',
      candidateIndex: 0,
      callIndex: 0,
      thoughtSignature: 'CiQB+/8=',
    });
    const built = body({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and London?' }] },
        {
          role: 'assistant',
          content: [],
          toolCalls: [
            { id: signed, name: 'get_weather', arguments: '{"city":"Paris"}' },
            { id: 'call_r1_0_1', name: 'get_weather', arguments: '{"city":"London"}' },
          ],
        },
        { role: 'tool', toolCallId: signed, content: '{"temperature":18}' },
        { role: 'tool', toolCallId: 'call_r1_0_1', content: 'rainy, 12 degrees' },
      ],
    });
    expect(built.contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'CiQB+/8=' },
          { functionCall: { name: 'get_weather', args: { city: 'London' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { temperature: 18 } } },
          { functionResponse: { name: 'get_weather', response: { output: 'rainy, 12 degrees' } } },
        ],
      },
    ]);
  });

  it("echoes Gemini's own call ids and signs a history from another model with Google's placeholder", () => {
    const built = body({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Go' }] },
        { role: 'assistant', content: [], toolCalls: [{ id: 'fc-7', name: 'run', arguments: '' }] },
        { role: 'tool', toolCallId: 'fc-7', content: 'done' },
      ],
    });
    expect(built.contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [
          { functionCall: { id: 'fc-7', name: 'run', args: {} }, thoughtSignature: skipThoughtSignatureValidator },
        ],
      },
      { role: 'user', parts: [{ functionResponse: { id: 'fc-7', name: 'run', response: { output: 'done' } } }] },
    ]);
  });

  it('answers 400 for a tool result answering no call, and for arguments that are not an object', () => {
    expect(
      thrown(() =>
        body({
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'Go' }] },
            { role: 'tool', toolCallId: 'call_missing', content: 'x' },
          ],
        }),
      ),
    ).toMatchObject({ status: 400, param: 'messages.[1].tool_call_id' });
    expect(
      thrown(() =>
        body({
          messages: [{ role: 'assistant', content: [], toolCalls: [{ id: 'a', name: 'f', arguments: '[1]' }] }],
        }),
      ),
    ).toMatchObject({ status: 400, param: 'messages.[0].tool_calls.[0].function.arguments' });
  });

  it('declares tools with parametersJsonSchema and maps tool_choice to functionCallingConfig', () => {
    const tools = [
      { name: 'get_weather', description: 'Weather', parameters: { properties: { city: { type: 'string' } } } },
      { name: 'get_time', parameters: { type: 'object', properties: {} } },
    ];
    const built = body({ tools, toolChoice: { type: 'tool', name: 'get_time' } });
    expect(built.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Weather',
            parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } },
          },
          { name: 'get_time', parametersJsonSchema: { type: 'object', properties: {} } },
        ],
      },
    ]);
    expect(built.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } });
    expect(body({ tools, toolChoice: { type: 'required' } }).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY' },
    });
    expect(body({ tools, toolChoice: { type: 'none' } }).toolConfig).toEqual({
      functionCallingConfig: { mode: 'NONE' },
    });
    expect(body({ tools, toolChoice: { type: 'auto' } }).toolConfig).toEqual({
      functionCallingConfig: { mode: 'AUTO' },
    });
    expect(thrown(() => body({ tools, toolChoice: { type: 'tool', name: 'nope' } }))).toMatchObject({
      status: 400,
      param: 'tool_choice',
    });
  });

  it('fills generationConfig, dropping penalties unless the deployment sends them', () => {
    const sampling: Partial<CanonicalChatRequest> = {
      temperature: 0.4,
      topP: 0.9,
      topK: 40,
      maxTokens: 512,
      stop: ['END'],
      n: 2,
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: 0,
      user: 'someone',
      responseFormat: { type: 'json_schema', name: 'city', schema: { type: 'object', $schema: 'x', default: {} } },
    };
    expect(body(sampling).generationConfig).toEqual({
      temperature: 0.4,
      topP: 0.9,
      topK: 40,
      maxOutputTokens: 512,
      stopSequences: ['END'],
      candidateCount: 2,
      seed: 7,
      responseMimeType: 'application/json',
      responseJsonSchema: { type: 'object' },
    });
    expect(body(sampling, 'gemini-2.0-flash', { sendPenalties: true }).generationConfig).toMatchObject({
      presencePenalty: 0.5,
    });
    expect(body(sampling, 'gemini-2.0-flash', { sendPenalties: true }).generationConfig).not.toHaveProperty(
      'frequencyPenalty',
    );
    expect(body({ responseFormat: { type: 'json_object' } }).generationConfig).toEqual({
      responseMimeType: 'application/json',
    });
  });

  it('maps reasoning to a thinking budget on Gemini 2.5 and a thinking level on Gemini 3', () => {
    expect(body({ reasoningEffort: 'low' }).generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: 2048, includeThoughts: true },
    });
    expect(body({ reasoningEffort: 'high', reasoningBudgetTokens: 5000 }).generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: 5000, includeThoughts: true },
    });
    expect(body({ reasoningEffort: 'none' }).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    expect(body({ reasoningEffort: 'medium' }, 'gemini-3-flash-preview').generationConfig).toEqual({
      thinkingConfig: { thinkingLevel: 'MEDIUM', includeThoughts: true },
    });
    expect(body({ reasoningEffort: 'none' }, 'gemini-3-pro-preview').generationConfig).toEqual({
      thinkingConfig: { thinkingLevel: 'MINIMAL' },
    });
    expect(
      body({ reasoningEffort: 'high' }, 'gemini-flash-latest', { thinkingControl: 'level' }).generationConfig,
    ).toEqual({ thinkingConfig: { thinkingLevel: 'HIGH', includeThoughts: true } });
    expect(body({}).generationConfig).toBeUndefined();
  });

  it('sends the deployment safety settings', () => {
    const safetySettings = [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }];
    expect(body({}, 'gemini-2.5-flash', { safetySettings }).safetySettings).toEqual(safetySettings);
  });
});

describe('validateGeminiOptions', () => {
  it('accepts the documented options and ignores others (Vertex adds its own)', () => {
    expect(
      validateGeminiOptions({
        safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }],
        thinkingControl: 'level',
        sendPenalties: true,
        embeddingTaskType: 'RETRIEVAL_DOCUMENT',
        project: 'vertex-only',
      }),
    ).toEqual([]);
  });

  it('names each bad option', () => {
    const problems = validateGeminiOptions({ thinkingControl: 'tokens', safetySettings: 'none', sendPenalties: 1 });
    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual([
      'safetySettings',
      'sendPenalties',
      'thinkingControl',
    ]);
  });
});

describe('buildGeminiEmbeddingsRequest', () => {
  it('posts one batchEmbedContents request per input, with dimensions and the task type', () => {
    const upstream = buildGeminiEmbeddingsRequest(
      { model: 'embed', input: ['a', 'b'], dimensions: 768 },
      { ...target, model: 'gemini-embedding-001', options: { embeddingTaskType: 'RETRIEVAL_QUERY' } },
    );
    expect(upstream.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents',
    );
    const embedRequest = (text: string) => ({
      model: 'models/gemini-embedding-001',
      content: { parts: [{ text }] },
      outputDimensionality: 768,
      taskType: 'RETRIEVAL_QUERY',
    });
    expect(JSON.parse(upstream.body ?? '')).toEqual({ requests: [embedRequest('a'), embedRequest('b')] });
  });

  it('answers 400 for token arrays', () => {
    expect(thrown(() => buildGeminiEmbeddingsRequest({ model: 'embed', input: [[1, 2]] }, target))).toMatchObject({
      status: 400,
      param: 'input.[0]',
    });
  });
});
