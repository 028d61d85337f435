import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';
import { parseJson } from '../../framing/parse-json.ts';
import { usageFromOpenAIWire } from './openai-usage-from-wire.ts';

/** The end (exclusive) of the JSON object starting at `start`, honouring strings and escapes; -1 if unterminated. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 92 /* \ */) index++;
      else if (code === 34 /* " */) inString = false;
    } else if (code === 34) inString = true;
    else if (code === 123 /* { */) depth++;
    else if (code === 125 /* } */ && --depth === 0) return index + 1;
  }
  return -1;
}

/** The first index at or after `index` that is not JSON whitespace. */
function skipWhitespace(text: string, index: number): number {
  let code = text.charCodeAt(index);
  while (code === 32 || code === 10 || code === 13 || code === 9) code = text.charCodeAt(++index);
  return index;
}

/**
 * Reads the top-level `usage` object of an OpenAI response body without parsing the whole body: the pass-through
 * path forwards the upstream's bytes untouched and needs only the token counts. OpenAI-shaped bodies put `usage`
 * last, so the search starts from the end; a `"usage"` inside message content is skipped because it is followed by
 * something other than an object, or its object lacks token counts.
 */
export function usageFromOpenAIText(text: string): CanonicalUsage | undefined {
  let searchFrom = text.length;
  for (;;) {
    const at = text.lastIndexOf('"usage"', searchFrom);
    if (at === -1) return undefined;
    searchFrom = at - 1;
    let index = skipWhitespace(text, at + 7);
    if (text.charCodeAt(index) !== 58 /* : */) continue;
    index = skipWhitespace(text, index + 1);
    if (text.charCodeAt(index) !== 123) continue;
    const end = objectEnd(text, index);
    if (end === -1) continue;
    const parsed = parseJson(text.slice(index, end));
    const usage = parsed.ok ? usageFromOpenAIWire(parsed.value) : undefined;
    if (usage !== undefined) return usage;
  }
}
