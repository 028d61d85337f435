import type { CanonicalStreamPart } from '../../canonical/canonical-stream-part.ts';
import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';
import { anthropicErrorBody, type GatewayError } from '../../errors.ts';
import type { StreamRenderer, StreamRendererContext } from '../dialect.ts';
import { advanceJsonValueScan, createJsonValueScan, type JsonValueScan } from '../../framing/json-value-scan.ts';
import { anthropicMessageId } from './anthropic-messages-render-response.ts';
import { anthropicStopReason } from './anthropic-messages-stop-reason.ts';
import { toAnthropicUsage, type AnthropicWireUsage } from '../../canonical/wire/anthropic-wire-usage.ts';

/** One Anthropic stream event; its JSON `type` is also its SSE event name. */
type AnthropicStreamEvent = { type: string } & Record<string, unknown>;

/** The parts that go into content blocks (everything but the message-level parts). */
type BlockPart = Exclude<CanonicalStreamPart, { type: 'response-start' | 'finish' | 'usage' | 'error' }>;

/** The content block being streamed, with the tool it renders when it is a `tool_use` block. */
type OpenBlock =
  | { kind: 'text' | 'reasoning'; index: number }
  | { kind: 'tool'; index: number; toolIndex: number; scan: JsonValueScan };

function frame(event: AnthropicStreamEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * The framed `event: error` that ends an Anthropic stream: `{"type":"error","error":{"type","message"}}`, the event
 * the Anthropic SDK turns into an APIError.
 */
export function renderAnthropicStreamBreak(error: GatewayError): string {
  return frame(anthropicErrorBody(error));
}

/**
 * The renderer of a translated stream for an Anthropic Messages client (Claude Code, `@anthropic-ai/sdk`): canonical
 * parts in, Anthropic's event grammar out, framed `event: <type>\ndata: <json>\n\n`:
 * `message_start`, one `ping`, then per content block `content_block_start`, `content_block_delta`s and
 * `content_block_stop` (indices 0, 1, 2 ... in order, never interleaved), then at {@link StreamRenderer.end}
 * `message_delta` (stop reason and the final usage) and `message_stop`. Only choice 0 is rendered.
 *
 * - `message_start` waits for the first content (or the end), so a `usage` part that follows `response-start` (an
 *   Anthropic upstream reports the prompt's tokens up front) gives it the real input tokens; otherwise it carries
 *   `context.estimatedInputTokens`. Its `output_tokens` is 0.
 * - Text and reasoning deltas open a `text` / `thinking` block at their first non-empty delta and append to it until
 *   a part of another block arrives; `-start` and `-end` parts mark boundaries. A block opens only with content, so
 *   no empty text block reaches the client (Anthropic rejects those when the client sends the turn back); a
 *   `reasoning-end` with a signature always renders, as a `signature_delta` before its block's stop.
 * - `tool-input-start` opens a `tool_use` block; its deltas become `input_json_delta`s. Until a tool's input is one
 *   complete JSON object (or its `tool-input-end`, `finish` or the end), parts of other blocks are held back and
 *   rendered in order after it, so an upstream that interleaves several tools' fragments (OpenAI-style chunks) still
 *   yields whole tool inputs. Fragments for a tool whose block is closed (after its complete input) are dropped.
 * - An `error` part renders `event: error` and ends the stream: nothing is rendered after it, `end()` included.
 *
 * @example
 * const renderer = createAnthropicStreamRenderer({ ...context, requestModel: request.model });
 * let body = parts.map((part) => renderer.render(part)).join('');
 * body += renderer.end();
 */
export function createAnthropicStreamRenderer(
  context: StreamRendererContext & { requestModel: string },
): StreamRenderer {
  let responseStart: { id: string; model: string } | undefined;
  let started = false;
  /** An error was rendered, or the stream ended: nothing more is rendered. */
  let over = false;
  let usage: CanonicalUsage | undefined;
  let stopReason: string | undefined;
  let finished = false;
  let nextIndex = 0;
  let open: OpenBlock | undefined;
  const knownTools = new Set<number>();
  /** Block parts held back while a tool's input is incomplete, in arrival order. */
  let held: BlockPart[] = [];

  const wireUsage = (): AnthropicWireUsage =>
    usage === undefined
      ? {
          input_tokens: context.estimatedInputTokens,
          output_tokens: 0,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        }
      : toAnthropicUsage(usage);

  const messageStart = (): string => {
    if (started) return '';
    started = true;
    const { input_tokens, cache_creation_input_tokens, cache_read_input_tokens } = wireUsage();
    const message = {
      id: anthropicMessageId(responseStart?.id ?? ''),
      type: 'message',
      role: 'assistant',
      model: responseStart?.model || context.fallbackModel || context.requestModel,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens: 0 },
    };
    return frame({ type: 'message_start', message }) + frame({ type: 'ping' });
  };

  const openBlock = (block: OpenBlock, contentBlock: Record<string, unknown>): string => {
    open = block;
    return frame({ type: 'content_block_start', index: block.index, content_block: contentBlock });
  };

  const closeBlock = (): string => {
    if (open === undefined) return '';
    const index = open.index;
    open = undefined;
    return frame({ type: 'content_block_stop', index });
  };

  const blockDelta = (index: number, delta: Record<string, unknown>): string =>
    frame({ type: 'content_block_delta', index, delta });

  const appendText = (kind: 'text' | 'reasoning', text: string): string => {
    if (text === '') return '';
    let output = '';
    let block = open;
    if (block?.kind !== kind) {
      block = { kind, index: nextIndex++ };
      output += closeBlock();
      output += openBlock(
        block,
        kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' },
      );
    }
    const delta = kind === 'text' ? { type: 'text_delta', text } : { type: 'thinking_delta', thinking: text };
    return output + blockDelta(block.index, delta);
  };

  const endReasoning = (signature: string | undefined): string => {
    if (signature === undefined || signature === '') return open?.kind === 'reasoning' ? closeBlock() : '';
    let output = '';
    let block = open;
    if (block?.kind !== 'reasoning') {
      block = { kind: 'reasoning', index: nextIndex++ };
      output += closeBlock();
      output += openBlock(block, { type: 'thinking', thinking: '', signature: '' });
    }
    return output + blockDelta(block.index, { type: 'signature_delta', signature }) + closeBlock();
  };

  const openTool = (toolIndex: number, id: string, name: string): string => {
    if (knownTools.has(toolIndex)) return '';
    knownTools.add(toolIndex);
    const scan: JsonValueScan = createJsonValueScan();
    const output = closeBlock();
    return (
      output +
      openBlock({ kind: 'tool', index: nextIndex++, toolIndex, scan }, { type: 'tool_use', id, name, input: {} })
    );
  };

  const renderBlockPart = (part: BlockPart): string => {
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start':
        return closeBlock();
      case 'text-delta':
        return appendText('text', part.delta);
      case 'reasoning-delta':
        return appendText('reasoning', part.delta);
      case 'text-end':
        return open?.kind === 'text' ? closeBlock() : '';
      case 'reasoning-end':
        return endReasoning(part.signature);
      case 'tool-input-start':
        return openTool(part.toolIndex, part.id, part.name);
      case 'tool-input-delta':
        if (open?.kind !== 'tool' || open.toolIndex !== part.toolIndex || part.delta === '') return '';
        advanceJsonValueScan(open.scan, part.delta);
        return blockDelta(open.index, { type: 'input_json_delta', partial_json: part.delta });
      case 'tool-input-end':
        return open?.kind === 'tool' && open.toolIndex === part.toolIndex ? closeBlock() : '';
    }
  };

  /** Whether the open block is a tool whose input may still grow, so other blocks must wait. */
  const blocked = (): boolean => open?.kind === 'tool' && !finished && open.scan.state !== 'complete';

  const belongsToOpenTool = (part: BlockPart): boolean =>
    open?.kind === 'tool' &&
    (part.type === 'tool-input-delta' || part.type === 'tool-input-end') &&
    part.toolIndex === open.toolIndex;

  /** Renders a block part, or holds it back (keeping the order of held parts) while a tool's input is open. */
  const step = (part: BlockPart): string => {
    if ((held.length > 0 || blocked()) && !belongsToOpenTool(part)) {
      held.push(part);
      return '';
    }
    const output = renderBlockPart(part);
    return output === '' ? '' : messageStart() + output;
  };

  /** Renders the held parts once nothing blocks them; a held tool may block again, holding the rest anew. */
  const release = (): string => {
    let output = '';
    while (held.length > 0 && !blocked()) {
      const pending = held;
      held = [];
      for (const part of pending) output += step(part);
    }
    return output;
  };

  return {
    render(part) {
      if (over || ('choiceIndex' in part && part.choiceIndex !== 0)) return '';
      switch (part.type) {
        case 'response-start':
          if (!started && responseStart === undefined) responseStart = { id: part.id, model: part.model };
          return '';
        case 'usage':
          usage = part.usage;
          return '';
        case 'finish':
          stopReason = anthropicStopReason(part.finishReason);
          finished = true;
          return release();
        case 'error':
          over = true;
          held = [];
          return renderAnthropicStreamBreak(part.error);
        default:
          return step(part) + release();
      }
    },

    end() {
      if (over) return '';
      finished = true;
      let output = release();
      output = messageStart() + output + closeBlock();
      over = true;
      const { output_tokens, input_tokens, cache_creation_input_tokens, cache_read_input_tokens } = wireUsage();
      output += frame({
        type: 'message_delta',
        delta: { stop_reason: stopReason ?? 'end_turn', stop_sequence: null },
        usage: { output_tokens, input_tokens, cache_creation_input_tokens, cache_read_input_tokens },
      });
      return output + frame({ type: 'message_stop' });
    },
  };
}
