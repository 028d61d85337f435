import type { CanonicalFinishReason } from '../../canonical/canonical-chat-response.ts';
import type { CanonicalStreamPart } from '../../canonical/canonical-stream-part.ts';
import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';
import type { GatewayError } from '../../errors.ts';
import type { StreamRenderer, StreamRendererContext } from '../dialect.ts';
import { advanceJsonValueScan, createJsonValueScan, type JsonValueScan } from '../../framing/json-value-scan.ts';
import { toResponsesUsage, type ResponsesWireUsage } from './openai-responses-usage.ts';
import { responseObject } from './openai-responses-render-response.ts';
import type { OpenAIResponsesRequest } from './openai-responses-request-schema.ts';

/** One Responses stream event; its JSON `type` is also its SSE event name. */
type ResponsesStreamEvent = { type: string } & Record<string, unknown>;

/** The parts that go into output items (everything but the response-level parts). */
type ItemPart = Exclude<CanonicalStreamPart, { type: 'response-start' | 'finish' | 'usage' | 'error' }>;

/** A message or reasoning item being streamed, with the text (or summary text) it has spelled so far. */
interface TextualItem {
  kind: 'text' | 'reasoning';
  index: number;
  id: string;
  text: string;
}

/** A function call item being streamed, with the arguments it has spelled so far. */
interface ToolItem {
  kind: 'tool';
  index: number;
  id: string;
  text: string;
  toolIndex: number;
  callId: string;
  name: string;
  scan: JsonValueScan;
}

/** The output item being streamed. */
type OpenItem = TextualItem | ToolItem;

/** The `incomplete_details.reason` of a finish that cut the answer short (`response.incomplete`); others complete it. */
const incompleteReasons: Partial<Record<CanonicalFinishReason['unified'], string>> = {
  length: 'max_output_tokens',
  'content-filter': 'content_filter',
};

const noUsage: CanonicalUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };

function frame(event: ResponsesStreamEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * The id of output item `outputIndex` of response `responseId`: `<prefix>_<responseId without resp_>_<outputIndex>`
 * (`msg_`, `rs_`, `fc_`, and `call_` for a tool call whose upstream sent no id). Deterministic, so a stored response
 * carries the ids its stream showed.
 *
 * @example
 * responsesOutputItemId('msg', 'resp_abc', 1); // 'msg_abc_1'
 */
export function responsesOutputItemId(prefix: string, responseId: string, outputIndex: number): string {
  const suffix = responseId.startsWith('resp_') ? responseId.slice('resp_'.length) : responseId;
  return `${prefix}_${suffix}_${outputIndex}`;
}

/**
 * The framed `event: error` that ends a Responses stream: `{type:'error', sequence_number, code, message, param}`,
 * the event the openai SDK turns into an APIError. It is rendered outside any renderer (the pipeline's stream break,
 * after whatever a renderer or tap sent), so it cannot know the stream's count: its `sequence_number` is
 * `sequenceNumber`, 0 unless the caller knows better (the native tap passes the last number it saw plus one).
 */
export function renderResponsesStreamBreak(error: GatewayError, sequenceNumber = 0): string {
  return frame({
    type: 'error',
    sequence_number: sequenceNumber,
    code: error.code,
    message: error.message,
    param: error.param,
  });
}

/** A translated stream's renderer for a Responses client, which also hands over the response it described. */
export interface ResponsesStreamRenderer extends StreamRenderer {
  /**
   * The complete Response object of the terminal event (`response.completed`, `response.incomplete` or
   * `response.failed`), for the gateway to store; undefined until that event has been rendered.
   */
  finalResponse(): Record<string, unknown> | undefined;
}

/** What a Responses stream renderer needs besides the usual context. */
export interface ResponsesStreamRendererContext extends StreamRendererContext {
  /** The gateway's own response id (`resp_...`), never the upstream's. */
  responseId: string;
  /** Unix seconds. */
  createdAt: number;
  /** The client's parsed request body, echoed in the response object. */
  request: Record<string, unknown>;
}

/**
 * The renderer of a translated stream for an OpenAI Responses client (Codex, the OpenAI Agents SDK, the `openai`
 * SDK's `responses.stream`): canonical parts in, the Responses event grammar out, framed
 * `event: <type>\ndata: <json>\n\n` with `sequence_number` counting from 0. Only choice 0 is rendered.
 *
 * - The first part (or the end, when none came) renders `response.created` and `response.in_progress`, whose
 *   response has status `in_progress`, an empty output and null usage. The response id is `context.responseId`;
 *   the model is the upstream's (`response-start`), else `context.fallbackModel`, else the request's; the request's
 *   settings are echoed with OpenAI's defaults.
 * - Reasoning deltas open a `reasoning` item (one summary part), text deltas a `message` item (one `output_text`
 *   part), `tool-input-start` a `function_call` item; each item is added, filled by deltas and closed
 *   (`...done` events, then `response.output_item.done`) before the next opens, `output_index` counting from 0.
 *   `-start` and `-end` parts mark boundaries; without them a part of another kind closes the open item. An item
 *   opens only with content, so no empty message reaches the client. Reasoning signatures have no Responses field
 *   and are dropped.
 * - Until a tool's arguments are one complete JSON value (or its `tool-input-end`, `finish` or the end), parts of
 *   other items are held back and rendered in order after it, so interleaved tool fragments still yield whole
 *   arguments; fragments for a tool whose item is closed are dropped. A call that streamed no arguments gets `{}`.
 * - `end()` closes the open item and renders `response.completed`, or `response.incomplete` (with the last item's
 *   status `incomplete`) when the finish was `length` or `content-filter`, with every item and the latest usage.
 * - An `error` part renders `response.failed` (the partial item included as `incomplete`) and ends the stream:
 *   nothing is rendered after it, `end()` included.
 *
 * @example
 * const renderer = createResponsesStreamRenderer({ ...context, responseId, createdAt, request: body });
 * let text = parts.map((part) => renderer.render(part)).join('') + renderer.end();
 * await store(renderer.finalResponse());
 */
export function createResponsesStreamRenderer(context: ResponsesStreamRendererContext): ResponsesStreamRenderer {
  const { responseId, request } = context;
  let model = context.fallbackModel || (typeof request.model === 'string' ? request.model : '');
  let started = false;
  /** A terminal event was rendered: nothing more is. */
  let over = false;
  let sequence = 0;
  let usage: CanonicalUsage | undefined;
  let finishReason: CanonicalFinishReason | undefined;
  let finished = false;
  let nextIndex = 0;
  let open: OpenItem | undefined;
  /** The closed items, as the final response lists them. */
  const output: Record<string, unknown>[] = [];
  const knownTools = new Set<number>();
  /** Item parts held back while a tool's arguments are incomplete, in arrival order. */
  let held: ItemPart[] = [];
  let terminal: Record<string, unknown> | undefined;

  const emit = (type: string, fields: Record<string, unknown>): string =>
    frame({ type, sequence_number: sequence++, ...fields });

  const responseOf = (
    status: string,
    details: {
      output?: Record<string, unknown>[];
      usage?: ResponsesWireUsage;
      error?: { code: string; message: string };
      incompleteReason?: string;
    } = {},
  ): Record<string, unknown> =>
    responseObject(request as OpenAIResponsesRequest, {
      id: responseId,
      createdAt: context.createdAt,
      status,
      completedAt: status === 'completed' ? Math.floor(Date.now() / 1000) : null,
      error: details.error ?? null,
      incompleteDetails: details.incompleteReason === undefined ? null : { reason: details.incompleteReason },
      model,
      output: details.output ?? [],
      usage: details.usage ?? null,
    });

  const start = (): string => {
    if (started) return '';
    started = true;
    return (
      emit('response.created', { response: responseOf('in_progress') }) +
      emit('response.in_progress', { response: responseOf('in_progress') })
    );
  };

  /** The item as `output_item.added` (in progress: no content yet), `output_item.done` and the response show it. */
  const itemObject = (item: OpenItem, status: 'in_progress' | 'completed' | 'incomplete'): Record<string, unknown> => {
    const content = status === 'in_progress' ? undefined : item.text;
    const { id } = item;
    if (item.kind === 'tool')
      return { id, type: 'function_call', status, arguments: content ?? '', call_id: item.callId, name: item.name };
    if (item.kind === 'reasoning')
      return { id, type: 'reasoning', summary: content === undefined ? [] : [summaryPart(content)] };
    return {
      id,
      type: 'message',
      status,
      content: content === undefined ? [] : [textPart(content)],
      role: 'assistant',
    };
  };

  const openItem = (item: OpenItem): string => {
    open = item;
    const fields = { item_id: item.id, output_index: item.index };
    const added = emit('response.output_item.added', {
      output_index: item.index,
      item: itemObject(item, 'in_progress'),
    });
    if (item.kind === 'tool') return added;
    return item.kind === 'text'
      ? added + emit('response.content_part.added', { ...fields, content_index: 0, part: textPart('') })
      : added + emit('response.reasoning_summary_part.added', { ...fields, summary_index: 0, part: summaryPart('') });
  };

  const closeItem = (status: 'completed' | 'incomplete' = 'completed'): string => {
    if (open === undefined) return '';
    const item = open;
    open = undefined;
    const fields = { item_id: item.id, output_index: item.index };
    let events: string;
    if (item.kind === 'tool') {
      // A call without arguments (an upstream that streams none for a parameterless tool) still gets a JSON object.
      events = item.text === '' ? argumentsDelta(item, '{}') : '';
      events += emit('response.function_call_arguments.done', { ...fields, arguments: item.text, name: item.name });
    } else if (item.kind === 'text') {
      events =
        emit('response.output_text.done', { ...fields, content_index: 0, text: item.text, logprobs: [] }) +
        emit('response.content_part.done', { ...fields, content_index: 0, part: textPart(item.text) });
    } else {
      events =
        emit('response.reasoning_summary_text.done', { ...fields, summary_index: 0, text: item.text }) +
        emit('response.reasoning_summary_part.done', { ...fields, summary_index: 0, part: summaryPart(item.text) });
    }
    const done = itemObject(item, status);
    output.push(done);
    return events + emit('response.output_item.done', { output_index: item.index, item: done });
  };

  const argumentsDelta = (item: ToolItem, delta: string): string => {
    item.text += delta;
    advanceJsonValueScan(item.scan, delta);
    return emit('response.function_call_arguments.delta', { item_id: item.id, output_index: item.index, delta });
  };

  const appendText = (kind: 'text' | 'reasoning', delta: string): string => {
    if (delta === '') return '';
    let events = '';
    let item: OpenItem | undefined = open;
    if (item === undefined || item.kind !== kind) {
      events += closeItem();
      const index = nextIndex++;
      const id = responsesOutputItemId(kind === 'text' ? 'msg' : 'rs', responseId, index);
      item = { kind, index, id, text: '' };
      events += openItem(item);
    }
    item.text += delta;
    const fields = { item_id: item.id, output_index: item.index };
    return (
      events +
      (kind === 'text'
        ? emit('response.output_text.delta', { ...fields, content_index: 0, delta, logprobs: [] })
        : emit('response.reasoning_summary_text.delta', { ...fields, summary_index: 0, delta }))
    );
  };

  const openTool = (toolIndex: number, callId: string, name: string): string => {
    if (knownTools.has(toolIndex)) return '';
    knownTools.add(toolIndex);
    const events = closeItem();
    const index = nextIndex++;
    const scan: JsonValueScan = createJsonValueScan();
    return (
      events +
      openItem({
        kind: 'tool',
        index,
        id: responsesOutputItemId('fc', responseId, index),
        text: '',
        toolIndex,
        callId: callId === '' ? responsesOutputItemId('call', responseId, index) : callId,
        name,
        scan,
      })
    );
  };

  const renderItemPart = (part: ItemPart): string => {
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start':
        return closeItem();
      case 'text-delta':
        return appendText('text', part.delta);
      case 'reasoning-delta':
        return appendText('reasoning', part.delta);
      case 'text-end':
        return open?.kind === 'text' ? closeItem() : '';
      case 'reasoning-end':
        return open?.kind === 'reasoning' ? closeItem() : '';
      case 'tool-input-start':
        return openTool(part.toolIndex, part.id, part.name);
      case 'tool-input-delta':
        if (open?.kind !== 'tool' || open.toolIndex !== part.toolIndex || part.delta === '') return '';
        return argumentsDelta(open, part.delta);
      case 'tool-input-end':
        return open?.kind === 'tool' && open.toolIndex === part.toolIndex ? closeItem() : '';
    }
  };

  /** Whether the open item is a tool call whose arguments may still grow, so other items must wait. */
  const blocked = (): boolean => open?.kind === 'tool' && !finished && open.scan.state !== 'complete';

  const belongsToOpenTool = (part: ItemPart): boolean =>
    open?.kind === 'tool' &&
    (part.type === 'tool-input-delta' || part.type === 'tool-input-end') &&
    part.toolIndex === open.toolIndex;

  /** Renders an item part, or holds it back (keeping the order of held parts) while a tool's arguments are open. */
  const step = (part: ItemPart): string => {
    if ((held.length > 0 || blocked()) && !belongsToOpenTool(part)) {
      held.push(part);
      return '';
    }
    return renderItemPart(part);
  };

  /** Renders the held parts once nothing blocks them; a held tool may block again, holding the rest anew. */
  const release = (): string => {
    let events = '';
    while (held.length > 0 && !blocked()) {
      const pending = held;
      held = [];
      for (const part of pending) events += step(part);
    }
    return events;
  };

  const fail = (error: GatewayError): string => {
    over = true;
    held = [];
    const items = open === undefined ? [...output] : [...output, itemObject(open, 'incomplete')];
    open = undefined;
    terminal = responseOf('failed', {
      output: items,
      ...(usage === undefined ? {} : { usage: toResponsesUsage(usage) }),
      error: { code: error.code ?? 'server_error', message: error.message },
    });
    return emit('response.failed', { response: terminal });
  };

  return {
    render(part) {
      if (over || ('choiceIndex' in part && part.choiceIndex !== 0)) return '';
      if (part.type === 'response-start' && !started && part.model !== '') model = part.model;
      const events = start();
      switch (part.type) {
        case 'response-start':
          return events;
        case 'usage':
          usage = part.usage;
          return events;
        case 'finish':
          finishReason = part.finishReason;
          finished = true;
          return events + release();
        case 'error':
          return events + fail(part.error);
        default:
          return events + step(part) + release();
      }
    },

    end() {
      if (over) return '';
      finished = true;
      let events = start() + release();
      const incompleteReason = finishReason === undefined ? undefined : incompleteReasons[finishReason.unified];
      events += closeItem(incompleteReason === undefined ? 'completed' : 'incomplete');
      over = true;
      terminal = responseOf(incompleteReason === undefined ? 'completed' : 'incomplete', {
        output: [...output],
        usage: toResponsesUsage(usage ?? noUsage),
        ...(incompleteReason === undefined ? {} : { incompleteReason }),
      });
      const type = incompleteReason === undefined ? 'response.completed' : 'response.incomplete';
      return events + emit(type, { response: terminal });
    },

    finalResponse: () => terminal,
  };
}

function summaryPart(text: string): Record<string, unknown> {
  return { type: 'summary_text', text };
}

function textPart(text: string): Record<string, unknown> {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}
