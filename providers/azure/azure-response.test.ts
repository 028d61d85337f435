import { describe, expect, it } from 'vitest';
import type { CanonicalStreamPart } from '../../src/canonical/index.ts';
import { isGatewayError } from '../../src/errors.ts';
import { azureOpenAIChatStream, parseAzureOpenAIChatResponse } from './azure-response.ts';

const safe = { filtered: false, severity: 'safe' };
const annotations = { hate: safe, self_harm: safe, sexual: safe, violence: safe };

function run(chunks: unknown[]): CanonicalStreamPart[] {
  const state = azureOpenAIChatStream.init();
  const parts = chunks.flatMap((data) => azureOpenAIChatStream.onEvent(state, { type: undefined, data }));
  return [...parts, ...azureOpenAIChatStream.onEnd(state, { sentinel: true })];
}

const header = {
  created: 1751871045,
  id: 'chatcmpl-async',
  model: 'gpt-4o-2024-11-20',
  object: 'chat.completion.chunk',
};

describe('azureOpenAIChatStream', () => {
  it('tolerates the Asynchronous Filter: annotation-only chunks and a late content_filter finish', () => {
    const parts = run([
      { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [] },
      { ...header, choices: [{ delta: { content: '', role: 'assistant' }, finish_reason: null, index: 0 }] },
      { ...header, choices: [{ delta: { content: 'Once upon' }, finish_reason: null, index: 0 }] },
      {
        choices: [
          {
            content_filter_offsets: { check_offset: 0, start_offset: 0, end_offset: 9 },
            content_filter_results: annotations,
            finish_reason: null,
            index: 0,
          },
        ],
        created: 0,
        id: '',
        model: '',
        object: '',
      },
      { ...header, choices: [{ delta: { content: ' a time' }, finish_reason: null, index: 0 }] },
      {
        choices: [
          {
            content_filter_offsets: { check_offset: 9, start_offset: 9, end_offset: 16 },
            content_filter_results: { ...annotations, violence: { filtered: true, severity: 'high' } },
            finish_reason: 'content_filter',
            index: 0,
          },
        ],
        created: 0,
        id: '',
        model: '',
        object: '',
      },
    ]);
    expect(parts.filter((part) => part.type === 'response-start')).toEqual([
      { type: 'response-start', id: 'chatcmpl-async', model: 'gpt-4o-2024-11-20', created: 1751871045 },
    ]);
    expect(parts.flatMap((part) => (part.type === 'text-delta' ? [part.delta] : []))).toEqual(['Once upon', ' a time']);
    expect(parts.filter((part) => part.type === 'finish')).toEqual([
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'content-filter', raw: 'content_filter' } },
    ]);
  });

  it('maps an error event as Azure', () => {
    const state = azureOpenAIChatStream.init();
    expect(() =>
      azureOpenAIChatStream.onEvent(state, {
        type: undefined,
        data: { error: { code: '429', message: 'Rate limit is exceeded. Try again in 3 seconds.' } },
      }),
    ).toThrow(expect.objectContaining({ status: 429, provider: 'azure-openai', code: 'rate_limit_exceeded' }));
  });
});

describe('parseAzureOpenAIChatResponse', () => {
  it('maps an error object in a 200 body as Azure', () => {
    let thrown: unknown;
    try {
      parseAzureOpenAIChatResponse({ error: { code: 'content_filter', message: 'The response was filtered.' } });
    } catch (error) {
      thrown = error;
    }
    expect(isGatewayError(thrown) && [thrown.status, thrown.code, thrown.provider]).toEqual([
      400,
      'content_filter',
      'azure-openai',
    ]);
  });
});
