import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { estimatePdfTokens, imageTokenEstimate } from '../../tokens/media-token-estimate.ts';
import type { Tokenizer } from '../../tokens/token-counter.ts';
import { validateAnthropicCountTokensRequest } from './anthropic-messages-request-schema.ts';
import { countAnthropicInputTokensWith } from './anthropic-messages-token-count.ts';

/** gpt-tokenizer's o200k_base as the Node adapter lends it (special-token spellings are ordinary text). */
const o200k: Tokenizer = {
  encoding: 'o200k_base',
  countTokens: (text) => encode(text, { disallowedSpecial: new Set() }).length,
};
const tokens = (text: string): number => encode(text, { disallowedSpecial: new Set() }).length;

const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const pdf = 'JVBERi0xLjQK'.repeat(1_000);
const readFileSchema = {
  type: 'object',
  properties: { path: { type: 'string', description: 'Absolute path of the file' } },
  required: ['path'],
};

/** A coding agent's turn, Claude Code style: cached system blocks, an image, documents, thinking, parallel tools. */
const body = {
  model: 'gpt-4o',
  system: [
    { type: 'text', text: 'You are a careful coding assistant.' },
    { type: 'text', text: 'Answer briefly; never invent file contents.', cache_control: { type: 'ephemeral' } },
  ],
  tools: [{ name: 'read_file', description: 'Reads a file from the workspace.', input_schema: readFileSchema }],
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Which port does the gateway listen on? <|endoftext|> is not special here.' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
        { type: 'document', title: 'notes', source: { type: 'text', media_type: 'text/plain', data: 'Ports: 8787.' } },
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf } },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The config says where.', signature: 'c2lnbmF0dXJl' },
        { type: 'text', text: 'Let me read the config and the log.' },
        { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: '/srv/torii.config.yaml' } },
        { type: 'tool_use', id: 'toolu_2', name: 'read_file', input: { path: '/var/log/torii.log' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'server:\n  port: 8787\n' },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_2',
          is_error: true,
          content: [
            { type: 'text', text: 'permission denied' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
          ],
        },
        { type: 'text', text: 'Thanks. And the log?' },
      ],
    },
  ],
};

describe('countAnthropicInputTokensWith (o200k_base)', () => {
  it('counts a Messages request as the translated OpenAI request: texts exactly, framing by the cookbook, media as estimated', () => {
    const counted = countAnthropicInputTokensWith(validateAnthropicCountTokensRequest(body), o200k);
    // The roles are one token each, so the framing is 4 tokens a message (3 + the role).
    for (const role of ['system', 'user', 'assistant', 'tool']) expect(tokens(role)).toBe(1);
    const expected =
      3 + // reply priming
      // system: the two blocks joined by a blank line, as the translation joins them
      (4 + tokens('You are a careful coding assistant.\n\nAnswer briefly; never invent file contents.')) +
      // user: text, image, text document under its title, PDF
      (4 +
        tokens('Which port does the gateway listen on? <|endoftext|> is not special here.') +
        imageTokenEstimate +
        tokens('# notes\n\nPorts: 8787.') +
        estimatePdfTokens(pdf)) +
      // assistant: thinking dropped; text and two tool calls (name and JSON arguments)
      (4 +
        tokens('Let me read the config and the log.') +
        (tokens('read_file') + tokens('{"path":"/srv/torii.config.yaml"}')) +
        (tokens('read_file') + tokens('{"path":"/var/log/torii.log"}'))) +
      // two tool messages (the error one prefixed), then the user message: the tool's image under its heading, text
      (4 + tokens('server:\n  port: 8787\n')) +
      (4 + tokens('Error: permission denied')) +
      (4 + tokens('Images returned by tool toolu_2:') + imageTokenEstimate + tokens('Thanks. And the log?')) +
      // the tool definition: name, description, JSON schema
      (tokens('read_file') + tokens('Reads a file from the workspace.') + tokens(JSON.stringify(readFileSchema)));
    expect(counted).toBe(expected);
    // The PDF: 12,000 base64 characters are 9,000 bytes, 3 pages of 1,500 tokens.
    expect(estimatePdfTokens(pdf)).toBe(4_500);
  });

  it('is undefined for a request the translation refuses (a server tool), so the route answers the estimate', () => {
    const request = validateAnthropicCountTokensRequest({
      ...body,
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
    });
    expect(countAnthropicInputTokensWith(request, o200k)).toBeUndefined();
  });
});
