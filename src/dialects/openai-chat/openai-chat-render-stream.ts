import type { CanonicalStreamPart } from '../../canonical/canonical-stream-part.ts';
import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';
import { openAIErrorBody, type GatewayError } from '../../errors.ts';
import type { StreamRenderer } from '../dialect.ts';
import { openAIFinishReason, openAIUsage } from './openai-chat-render-response.ts';

/** Per-stream state of the OpenAI chunk renderer. */
export interface OpenAIChunkRendererState {
  id: string;
  model: string;
  created: number;
  includeUsage: boolean;
  usage: CanonicalUsage | undefined;
  rolesSent: Set<number>;
}

/** Fresh renderer state; `includeUsage` mirrors the client's `stream_options.include_usage`. */
export function createOpenAIChunkRendererState(includeUsage: boolean, fallbackModel: string): OpenAIChunkRendererState {
  return {
    id: '',
    model: fallbackModel,
    created: Math.floor(Date.now() / 1000),
    includeUsage,
    usage: undefined,
    rolesSent: new Set(),
  };
}

function chunk(
  state: OpenAIChunkRendererState,
  choiceIndex: number,
  delta: Record<string, unknown>,
  finishReason: string | null = null,
): string {
  if (!state.rolesSent.has(choiceIndex)) {
    state.rolesSent.add(choiceIndex);
    delta = { role: 'assistant', ...delta };
  }
  const body: Record<string, unknown> = {
    id: state.id,
    object: 'chat.completion.chunk',
    created: state.created,
    model: state.model,
    choices: [{ index: choiceIndex, delta, logprobs: null, finish_reason: finishReason }],
  };
  if (state.includeUsage) body.usage = null;
  return JSON.stringify(body);
}

/**
 * Renders one canonical stream part as the `data:` payloads of OpenAI `chat.completion.chunk` events (JSON text,
 * not yet framed). Usage is held back and emitted by {@link renderOpenAIStreamEnd}, as OpenAI sends it last.
 */
export function renderOpenAIStreamPart(state: OpenAIChunkRendererState, part: CanonicalStreamPart): string[] {
  switch (part.type) {
    case 'response-start':
      state.id = part.id;
      // An upstream whose stream names no model (Cohere's) keeps the fallback: the deployment's model.
      if (part.model !== '') state.model = part.model;
      state.created = part.created;
      return [];
    case 'text-delta':
      return [chunk(state, part.choiceIndex, { content: part.delta })];
    case 'reasoning-delta':
      return [chunk(state, part.choiceIndex, { reasoning_content: part.delta })];
    case 'tool-input-start':
      return [
        chunk(state, part.choiceIndex, {
          tool_calls: [
            { index: part.toolIndex, id: part.id, type: 'function', function: { name: part.name, arguments: '' } },
          ],
        }),
      ];
    case 'tool-input-delta':
      return [
        chunk(state, part.choiceIndex, {
          tool_calls: [{ index: part.toolIndex, function: { arguments: part.delta } }],
        }),
      ];
    case 'finish':
      return [chunk(state, part.choiceIndex, {}, openAIFinishReason(part.finishReason))];
    case 'usage':
      state.usage = part.usage;
      return [];
    case 'error':
      return [JSON.stringify(openAIErrorBody(part.error))];
    default:
      // Block boundaries (text-start, tool-input-end ...) have no OpenAI chunk.
      return [];
  }
}

/** The final payloads: the usage chunk (only when the client asked for it). `[DONE]` is added by the framing. */
export function renderOpenAIStreamEnd(state: OpenAIChunkRendererState): string[] {
  if (!state.includeUsage || state.usage === undefined) return [];
  return [
    JSON.stringify({
      id: state.id,
      object: 'chat.completion.chunk',
      created: state.created,
      model: state.model,
      choices: [],
      usage: openAIUsage(state.usage),
    }),
  ];
}

/**
 * The OpenAI chat dialect's stream renderer: `data:` framed `chat.completion.chunk` events, the usage chunk when the
 * client asked for it, then `data: [DONE]`. After an error event nothing more is rendered (OpenAI sends no
 * `[DONE]` after an error).
 */
export function createOpenAIChatStreamRenderer(includeUsage: boolean, fallbackModel: string): StreamRenderer {
  const state = createOpenAIChunkRendererState(includeUsage, fallbackModel);
  let broken = false;
  return {
    render(part) {
      if (broken) return '';
      if (part.type === 'error') broken = true;
      let output = '';
      for (const payload of renderOpenAIStreamPart(state, part)) output += `data: ${payload}\n\n`;
      return output;
    },
    end() {
      if (broken) return '';
      let output = '';
      for (const payload of renderOpenAIStreamEnd(state)) output += `data: ${payload}\n\n`;
      return `${output}data: [DONE]\n\n`;
    },
  };
}

/** The OpenAI event that ends a stream with an error: `data: {"error":{...}}`. */
export function renderOpenAIStreamBreak(error: GatewayError): string {
  return `data: ${JSON.stringify(openAIErrorBody(error))}\n\n`;
}
