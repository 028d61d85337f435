import { isJsonObject, parseEventObject, readFramedEvents } from './framed-events.ts';

const finishReasons: readonly string[] = ['stop', 'length', 'tool_calls', 'content_filter', 'function_call'];

/**
 * The grammar problems of an OpenAI chat completions stream as the client received it; empty when it is sound:
 * unnamed `data:` events, each a JSON `chat.completion.chunk` with one shared `id` and a `choices` array; each choice
 * finishes exactly once and gets no delta after its finish; at most one usage chunk (`choices: []` with a `usage`
 * object), after the finishes; and `data: [DONE]` last.
 *
 * @example
 * expect(checkOpenAIChatStreamGrammar(await response.text())).toEqual([]);
 */
export function checkOpenAIChatStreamGrammar(text: string): string[] {
  const { events, problems } = readFramedEvents(text);
  if (events.at(-1)?.data !== '[DONE]') problems.push('the stream does not end with data: [DONE]');
  let id: unknown;
  let usageChunks = 0;
  const finishes = new Map<number, number>();

  events.forEach((framed, position) => {
    const where = `event ${position}`;
    if (framed.event !== undefined) problems.push(`${where}: named '${framed.event}'; OpenAI chunks have no name`);
    if (framed.data === '[DONE]') {
      if (position !== events.length - 1) problems.push(`${where}: [DONE] before the last event`);
      return;
    }
    const parsed = parseEventObject(framed, position);
    if (!parsed.ok) {
      problems.push(parsed.problem);
      return;
    }
    const chunk = parsed.value;
    if (chunk.object !== 'chat.completion.chunk') problems.push(`${where}: object is ${String(chunk.object)}`);
    if (typeof chunk.id !== 'string') problems.push(`${where}: no id`);
    id ??= chunk.id;
    if (chunk.id !== id) problems.push(`${where}: id ${String(chunk.id)} differs from ${String(id)}`);
    if (!Array.isArray(chunk.choices)) {
      problems.push(`${where}: no choices array`);
      return;
    }
    if (chunk.choices.length === 0) {
      usageChunks++;
      if (!isJsonObject(chunk.usage)) problems.push(`${where}: a chunk without choices and without usage`);
      if (finishes.size === 0) problems.push(`${where}: the usage chunk comes before any finish`);
      return;
    }
    if (usageChunks > 0) problems.push(`${where}: a choice chunk after the usage chunk`);
    for (const choice of chunk.choices as unknown[]) {
      if (!isJsonObject(choice) || typeof choice.index !== 'number' || !isJsonObject(choice.delta)) {
        problems.push(`${where}: malformed choice ${JSON.stringify(choice)}`);
        continue;
      }
      if (finishes.has(choice.index)) problems.push(`${where}: choice ${choice.index} continues after its finish`);
      if (choice.finish_reason === null) continue;
      if (typeof choice.finish_reason !== 'string' || !finishReasons.includes(choice.finish_reason))
        problems.push(`${where}: finish_reason ${JSON.stringify(choice.finish_reason)}`);
      finishes.set(choice.index, (finishes.get(choice.index) ?? 0) + 1);
    }
  });
  if (finishes.size === 0) problems.push('no choice finished');
  if (usageChunks > 1) problems.push(`${usageChunks} usage chunks`);
  return problems;
}
