import { isDeepStrictEqual } from 'node:util';
import { isJsonObject, parseEventObject, readFramedEvents } from './framed-events.ts';

/**
 * OpenAI's Responses stream grammar (platform.openai.com, "Streaming API responses"), checked over a framed response
 * as a client reads it:
 *
 * - every event is `event: <name>` + one `data:` line whose JSON `type` equals the name, and whose `sequence_number`
 *   counts from 0 without a gap;
 * - `response.created` first, then `response.in_progress`, each with a response `in_progress`, an empty `output` and
 *   the stream's one response id; a terminal event (`response.completed`, `response.incomplete` or `response.failed`,
 *   its response's `status` saying the same) last, exactly once, nothing after it; no `error` event;
 * - output items one at a time, `output_index` contiguous from 0: each `response.output_item.added` (a `message`,
 *   `reasoning` or `function_call` item with a new id) has exactly one `response.output_item.done` with the same
 *   index, id and type, and every event between them carries that item's `item_id` and `output_index`;
 * - in a `message` item, content parts one at a time (`content_part.added` ... `content_part.done`, `content_index`
 *   from 0), `output_text.delta` only inside an open `output_text` part, and `output_text.done`, the part's `done`
 *   and the item's `done` all carrying the concatenated deltas; a `reasoning` item the same with
 *   `reasoning_summary_part.*`, `reasoning_summary_text.*` and `summary_index`; a `function_call` item's
 *   `function_call_arguments.done` and item carrying the concatenated `function_call_arguments.delta`s, JSON when the
 *   call completed;
 * - the terminal response's `output` is exactly the items of the `output_item.done` events, in order, and its `usage`
 *   has numeric token counts (a completed or incomplete response).
 */

/** The terminal events, by the response status each one reports. */
const terminalStatuses: Readonly<Record<string, string>> = {
  'response.completed': 'completed',
  'response.incomplete': 'incomplete',
  'response.failed': 'failed',
};

/** The events of a sub-part (a content part of a message, a summary part of a reasoning item). */
interface PartGrammar {
  /** The item type the part belongs to. */
  itemType: string;
  /** The field of the events that numbers the part. */
  indexField: 'content_index' | 'summary_index';
  /** The item's field that lists its parts. */
  listField: 'content' | 'summary';
  /** The type of the part object (`part.type`). */
  partType: string;
  added: string;
  delta: string;
  textDone: string;
  done: string;
}

const messagePart: PartGrammar = {
  itemType: 'message',
  indexField: 'content_index',
  listField: 'content',
  partType: 'output_text',
  added: 'response.content_part.added',
  delta: 'response.output_text.delta',
  textDone: 'response.output_text.done',
  done: 'response.content_part.done',
};

const summaryPart: PartGrammar = {
  itemType: 'reasoning',
  indexField: 'summary_index',
  listField: 'summary',
  partType: 'summary_text',
  added: 'response.reasoning_summary_part.added',
  delta: 'response.reasoning_summary_text.delta',
  textDone: 'response.reasoning_summary_text.done',
  done: 'response.reasoning_summary_part.done',
};

const partGrammars = [messagePart, summaryPart];

interface OpenPart {
  index: number;
  /** The concatenated deltas. */
  text: string;
  /** Whether its `...text.done` came. */
  textDone: boolean;
}

interface OpenItem {
  index: number;
  id: string;
  type: string;
  /** The concatenated argument deltas of a function call. */
  arguments: string;
  argumentsDone: boolean;
  /** The parts' texts by part index, as their deltas spelled them. */
  partTexts: string[];
  part: OpenPart | undefined;
}

/**
 * The grammar problems of an OpenAI Responses stream as the client received it; empty when it follows the grammar.
 *
 * @example
 * expect(checkOpenAIResponsesStreamGrammar(await response.text())).toEqual([]);
 */
export function checkOpenAIResponsesStreamGrammar(text: string): string[] {
  const { events, problems } = readFramedEvents(text);
  let responseId: unknown;
  let terminal: Record<string, unknown> | undefined;
  let open: OpenItem | undefined;
  let nextIndex = 0;
  const itemIds = new Set<unknown>();
  /** The items of the `output_item.done` events, in order. */
  const doneItems: unknown[] = [];

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
    if (data.sequence_number !== position)
      problems.push(`${where}: sequence_number ${String(data.sequence_number)}, expected ${position}`);
    if (terminal !== undefined) {
      problems.push(`${where}: after the terminal event`);
      return;
    }
    if (position === 0 && type !== 'response.created')
      problems.push(`${where}: the first event is not response.created`);

    const checkResponse = (expectedStatus: string): Record<string, unknown> | undefined => {
      const response = data.response;
      if (!isJsonObject(response)) {
        problems.push(`${where}: no response object`);
        return undefined;
      }
      if (response.object !== 'response') problems.push(`${where}: response.object is ${String(response.object)}`);
      if (typeof response.id !== 'string' || !response.id.startsWith('resp_'))
        problems.push(`${where}: response id ${JSON.stringify(response.id)} is not a resp_ id`);
      responseId ??= response.id;
      if (response.id !== responseId) problems.push(`${where}: response id ${String(response.id)} changed`);
      if (response.status !== expectedStatus)
        problems.push(`${where}: response status ${JSON.stringify(response.status)}, expected ${expectedStatus}`);
      return response;
    };

    /** Whether the event belongs to the open item (of `itemType` when given), with a problem when not. */
    const openItemOfEvent = (itemType: string): OpenItem | undefined => {
      if (open === undefined) {
        problems.push(`${where}: no output item is open`);
        return undefined;
      }
      if (data.item_id !== open.id || data.output_index !== open.index) {
        problems.push(
          `${where}: item ${String(data.item_id)} at ${String(data.output_index)} is not the open item ${open.id} at ${open.index}`,
        );
        return undefined;
      }
      if (open.type !== itemType) {
        problems.push(`${where}: in a ${open.type} item`);
        return undefined;
      }
      return open;
    };

    const partGrammar = partGrammars.find((grammar) =>
      [grammar.added, grammar.delta, grammar.textDone, grammar.done].includes(type),
    );
    if (partGrammar !== undefined) {
      const item = openItemOfEvent(partGrammar.itemType);
      if (item !== undefined) problems.push(...checkPartEvent(partGrammar, item, type, data, where));
      return;
    }

    switch (type) {
      case 'response.created':
      case 'response.in_progress': {
        const expectedPosition = type === 'response.created' ? 0 : 1;
        if (position !== expectedPosition) problems.push(`${where}: at position ${position}, not ${expectedPosition}`);
        const response = checkResponse('in_progress');
        if (response !== undefined && !(Array.isArray(response.output) && response.output.length === 0))
          problems.push(`${where}: the output is not []`);
        return;
      }
      case 'response.output_item.added': {
        if (open !== undefined) problems.push(`${where}: item ${open.id} is still open`);
        const item = isJsonObject(data.item) ? data.item : {};
        const itemType = String(item.type);
        if (!['message', 'reasoning', 'function_call'].includes(itemType))
          problems.push(`${where}: unknown item ${JSON.stringify(data.item)}`);
        if (data.output_index !== nextIndex)
          problems.push(`${where}: output_index ${String(data.output_index)}, expected ${nextIndex}`);
        nextIndex++;
        if (typeof item.id !== 'string' || itemIds.has(item.id))
          problems.push(`${where}: item id ${JSON.stringify(item.id)} is not a new id`);
        itemIds.add(item.id);
        if (itemType === 'function_call' && item.arguments !== '')
          problems.push(`${where}: a function call added with arguments ${JSON.stringify(item.arguments)}`);
        open = {
          index: typeof data.output_index === 'number' ? data.output_index : -1,
          id: String(item.id),
          type: itemType,
          arguments: '',
          argumentsDone: false,
          partTexts: [],
          part: undefined,
        };
        return;
      }
      case 'response.function_call_arguments.delta': {
        const call = openItemOfEvent('function_call');
        if (call === undefined) return;
        if (call.argumentsDone) problems.push(`${where}: after function_call_arguments.done`);
        if (typeof data.delta !== 'string') problems.push(`${where}: delta is not a string`);
        else call.arguments += data.delta;
        return;
      }
      case 'response.function_call_arguments.done': {
        const call = openItemOfEvent('function_call');
        if (call === undefined) return;
        if (call.argumentsDone) problems.push(`${where}: a second function_call_arguments.done`);
        call.argumentsDone = true;
        if (data.arguments !== call.arguments)
          problems.push(`${where}: arguments ${JSON.stringify(data.arguments)} are not the deltas' ${call.arguments}`);
        return;
      }
      case 'response.output_item.done': {
        const item = isJsonObject(data.item) ? data.item : {};
        if (open === undefined || data.output_index !== open.index || item.id !== open.id || item.type !== open.type) {
          problems.push(`${where}: item ${String(item.id)} at ${String(data.output_index)} is not the open item`);
          open = undefined;
          doneItems.push(data.item);
          return;
        }
        problems.push(...checkItemDone(open, item, where));
        open = undefined;
        doneItems.push(data.item);
        return;
      }
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed': {
        const response = checkResponse(terminalStatuses[type] ?? '');
        terminal = response ?? {};
        if (open !== undefined && type !== 'response.failed') problems.push(`${where}: item ${open.id} is still open`);
        if (response === undefined) return;
        // A failed response also lists the partial item that was open; the others list exactly the items done.
        const expected = type === 'response.failed' && open !== undefined ? doneItems.length + 1 : doneItems.length;
        const output = Array.isArray(response.output) ? response.output : [];
        if (!isDeepStrictEqual(output.slice(0, doneItems.length), doneItems) || output.length !== expected)
          problems.push(`${where}: the response's output is not the items done, in order`);
        if (type !== 'response.failed') problems.push(...checkUsage(response.usage, where));
        return;
      }
      case 'error':
        problems.push(`${where}: ${framed.data}`);
        return;
      default:
        problems.push(`${where}: not an event type of the grammar`);
    }
  });
  if (events.length === 0) problems.push('no events');
  if (terminal === undefined) problems.push('the stream does not end with a terminal event');
  return problems;
}

/** The problems of one event of a message's content part or a reasoning item's summary part. */
function checkPartEvent(
  grammar: PartGrammar,
  item: OpenItem,
  type: string,
  data: Record<string, unknown>,
  where: string,
): string[] {
  const index = data[grammar.indexField];
  if (type === grammar.added) {
    const problems: string[] = [];
    if (item.part !== undefined) problems.push(`${where}: part ${item.part.index} is still open`);
    if (index !== item.partTexts.length)
      problems.push(`${where}: ${grammar.indexField} ${String(index)}, expected ${item.partTexts.length}`);
    const part = isJsonObject(data.part) ? data.part : {};
    if (part.type !== grammar.partType || part.text !== '')
      problems.push(`${where}: part ${JSON.stringify(data.part)} is not an empty ${grammar.partType}`);
    item.part = { index: item.partTexts.length, text: '', textDone: false };
    item.partTexts.push('');
    return problems;
  }
  const part = item.part;
  if (part === undefined || index !== part.index)
    return [`${where}: ${grammar.indexField} ${String(index)} is not open`];
  switch (type) {
    case grammar.delta:
      if (part.textDone) return [`${where}: after ${grammar.textDone}`];
      if (typeof data.delta !== 'string') return [`${where}: delta is not a string`];
      part.text += data.delta;
      item.partTexts[part.index] = part.text;
      return [];
    case grammar.textDone:
      if (part.textDone) return [`${where}: a second ${grammar.textDone}`];
      part.textDone = true;
      return data.text === part.text ? [] : [`${where}: text ${JSON.stringify(data.text)} is not the deltas'`];
    default: {
      // grammar.done
      item.part = undefined;
      const problems: string[] = [];
      if (!part.textDone) problems.push(`${where}: before ${grammar.textDone}`);
      const donePart = isJsonObject(data.part) ? data.part : {};
      if (donePart.type !== grammar.partType || donePart.text !== part.text)
        problems.push(`${where}: part ${JSON.stringify(data.part)} is not the deltas' text`);
      return problems;
    }
  }
}

/** The problems of an item's `output_item.done` against what its events spelled. */
function checkItemDone(open: OpenItem, item: Record<string, unknown>, where: string): string[] {
  const problems: string[] = [];
  if (open.part !== undefined) problems.push(`${where}: part ${open.part.index} is still open`);
  if (open.type === 'function_call') {
    if (!open.argumentsDone) problems.push(`${where}: no function_call_arguments.done`);
    if (item.arguments !== open.arguments)
      problems.push(`${where}: arguments ${JSON.stringify(item.arguments)} are not the deltas' ${open.arguments}`);
    if (typeof item.call_id !== 'string' || item.call_id === '' || typeof item.name !== 'string' || item.name === '')
      problems.push(`${where}: a function call without call_id or name`);
    if (item.status === 'completed' && !isJson(open.arguments))
      problems.push(`${where}: the arguments of a completed call are not JSON: ${open.arguments}`);
    return problems;
  }
  const grammar = open.type === 'message' ? messagePart : summaryPart;
  const parts = item[grammar.listField];
  const texts = Array.isArray(parts) ? parts.map((part) => (isJsonObject(part) ? part.text : undefined)) : undefined;
  if (!isDeepStrictEqual(texts, open.partTexts))
    problems.push(`${where}: the item's ${grammar.listField} is not the parts its deltas spelled`);
  return problems;
}

function checkUsage(usage: unknown, where: string): string[] {
  if (!isJsonObject(usage)) return [`${where}: no usage object`];
  return ['input_tokens', 'output_tokens', 'total_tokens']
    .filter((key) => typeof usage[key] !== 'number')
    .map((key) => `${where}: usage.${key} is not a number`);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
