import { isJsonObject, parseEventObject, readFramedEvents } from './framed-events.ts';

/**
 * Anthropic's documented Messages stream grammar (docs.anthropic.com, "Streaming Messages"), checked over a framed
 * response as a client reads it:
 *
 * - every event is `event: <name>` + one `data:` line whose JSON `type` equals the name;
 * - `message_start` first (a `message` with empty `content`, `stop_reason: null` and `usage.input_tokens > 0`),
 *   `message_stop` last, nothing after it; `ping` anywhere between them;
 * - content blocks one at a time, indices contiguous from 0: each `content_block_start` has exactly one
 *   `content_block_stop`, and the deltas between them carry the block's index and a delta type of the block's type
 *   (`text_delta` in `text`, `input_json_delta` in `tool_use`, `thinking_delta`/`signature_delta` in `thinking`);
 * - `message_delta` exactly once, after the last block closed and before `message_stop`, with a documented
 *   `stop_reason` and a numeric `usage.output_tokens`;
 * - no `error` event (these checks read streams that are meant to succeed).
 */

/** The stop reasons Anthropic documents for a finished message. */
export const anthropicStopReasons: readonly string[] = [
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'refusal',
  'pause_turn',
];

/** The delta types each content block type may receive. */
const deltaTypesByBlockType: Readonly<Record<string, readonly string[]>> = {
  text: ['text_delta', 'citations_delta'],
  thinking: ['thinking_delta', 'signature_delta'],
  redacted_thinking: [],
  tool_use: ['input_json_delta'],
  server_tool_use: ['input_json_delta'],
};

interface OpenBlock {
  index: number;
  type: string;
}

/**
 * The grammar problems of an Anthropic Messages stream as the client received it; empty when it follows the grammar.
 *
 * @example
 * expect(checkAnthropicStreamGrammar(await response.text())).toEqual([]);
 */
export function checkAnthropicStreamGrammar(text: string): string[] {
  const { events, problems } = readFramedEvents(text);
  let started = false;
  let stopped = false;
  let messageDeltas = 0;
  let nextIndex = 0;
  let open: OpenBlock | undefined;

  events.forEach((framed, position) => {
    const parsed = parseEventObject(framed, position);
    if (!parsed.ok) {
      problems.push(parsed.problem);
      return;
    }
    const data = parsed.value;
    const type = typeof data.type === 'string' ? data.type : `<${String(data.type)}>`;
    const where = `event ${position} (${type})`;
    if (framed.event === undefined) problems.push(`${where}: no event: line`);
    else if (framed.event !== type) problems.push(`${where}: named '${framed.event}' but its JSON type is '${type}'`);
    if (stopped) {
      problems.push(`${where}: after message_stop`);
      return;
    }
    if (!started && type !== 'message_start') problems.push(`${where}: before message_start`);
    switch (type) {
      case 'message_start':
        if (started || position !== 0) problems.push(`${where}: message_start is not the first event`);
        started = true;
        problems.push(...checkMessageStart(data.message, where));
        return;
      case 'ping':
        return;
      case 'content_block_start': {
        if (messageDeltas > 0) problems.push(`${where}: a block starts after message_delta`);
        if (open !== undefined) problems.push(`${where}: block ${open.index} is still open`);
        const block = data.content_block;
        const blockType = isJsonObject(block) && typeof block.type === 'string' ? block.type : undefined;
        if (blockType === undefined || !(blockType in deltaTypesByBlockType))
          problems.push(`${where}: unknown content block ${JSON.stringify(block)}`);
        if (data.index !== nextIndex) problems.push(`${where}: index ${String(data.index)}, expected ${nextIndex}`);
        nextIndex++;
        open = { index: typeof data.index === 'number' ? data.index : -1, type: blockType ?? 'unknown' };
        return;
      }
      case 'content_block_delta': {
        if (open === undefined || data.index !== open.index) {
          problems.push(`${where}: index ${String(data.index)} is not the open block`);
          return;
        }
        const delta = data.delta;
        const deltaType = isJsonObject(delta) && typeof delta.type === 'string' ? delta.type : undefined;
        const allowed = deltaTypesByBlockType[open.type] ?? [];
        if (deltaType === undefined || !allowed.includes(deltaType))
          problems.push(`${where}: ${String(deltaType)} in a ${open.type} block`);
        return;
      }
      case 'content_block_stop':
        if (open === undefined || data.index !== open.index)
          problems.push(`${where}: index ${String(data.index)} is not the open block`);
        open = undefined;
        return;
      case 'message_delta': {
        if (open !== undefined) problems.push(`${where}: block ${open.index} is still open`);
        if (++messageDeltas > 1) problems.push(`${where}: a second message_delta`);
        const delta = isJsonObject(data.delta) ? data.delta : {};
        if (typeof delta.stop_reason !== 'string' || !anthropicStopReasons.includes(delta.stop_reason))
          problems.push(`${where}: stop_reason ${JSON.stringify(delta.stop_reason)} is not a documented one`);
        const usage = isJsonObject(data.usage) ? data.usage : {};
        if (typeof usage.output_tokens !== 'number') problems.push(`${where}: usage.output_tokens is not a number`);
        return;
      }
      case 'message_stop':
        if (messageDeltas !== 1) problems.push(`${where}: ${messageDeltas} message_delta events before it, not 1`);
        stopped = true;
        return;
      case 'error':
        problems.push(`${where}: ${framed.data}`);
        return;
      default:
        problems.push(`${where}: not an event type of the grammar`);
    }
  });
  if (events.length === 0) problems.push('no events');
  if (open !== undefined) problems.push(`block ${open.index} never stopped`);
  if (!stopped) problems.push('the stream does not end with message_stop');
  return problems;
}

function checkMessageStart(message: unknown, where: string): string[] {
  if (!isJsonObject(message)) return [`${where}: no message object`];
  const problems: string[] = [];
  if (message.type !== 'message' || message.role !== 'assistant')
    problems.push(`${where}: message is not an assistant message`);
  if (!Array.isArray(message.content) || message.content.length > 0) problems.push(`${where}: content is not []`);
  if (message.stop_reason !== null) problems.push(`${where}: stop_reason is not null`);
  const usage = isJsonObject(message.usage) ? message.usage : {};
  if (typeof usage.input_tokens !== 'number' || usage.input_tokens <= 0)
    problems.push(`${where}: usage.input_tokens is ${JSON.stringify(usage.input_tokens)}, not > 0`);
  return problems;
}
