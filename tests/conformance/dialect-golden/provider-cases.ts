import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinProviders } from '../../../providers/index.ts';
import type { CanonicalChatResponse, CanonicalUsage, ProviderTranslator } from '../../../src/canonical/index.ts';
import { createTranslatedStream } from '../../../src/routes/translated-stream.ts';
import type { DialectEntry } from './dialect-entries.ts';

/**
 * The provider side of the golden suite: every recorded success case of every provider (`providers/<provider>/
 * __fixtures__/<case>.json` with a `<case>.chunks.txt` beside it, error fixtures left out), read by the provider's
 * translator and rendered by a client dialect the way the pipeline does it (`handle-model-request.ts`).
 */

const providersFolder = new URL('../../../providers/', import.meta.url);

/** One recorded case of one provider. */
export interface ProviderCase {
  /** The provider's folder: its translator's id, or the name of the preset that uses it. */
  provider: string;
  /** The fixture's name without extension (`text`, `tools` ...). */
  name: string;
  translator: ProviderTranslator;
  /** The non-streamed answer's JSON text. */
  json: string;
  /** The recorded SSE stream. */
  chunks: string;
}

/**
 * Finds every provider's success fixtures with both readings, in a stable order. A provider folder with fixtures but
 * no built-in translator of the same id is an error, so a new provider cannot be skipped silently.
 */
export function discoverProviderCases(): ProviderCase[] {
  const cases: ProviderCase[] = [];
  const providers = readdirSync(providersFolder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  for (const provider of providers) {
    const fixtures = new URL(`${provider}/__fixtures__/`, providersFolder);
    if (!existsSync(fixtures)) continue;
    const names = readdirSync(fixtures)
      .filter((file) => file.endsWith('.json') && !file.startsWith('error-'))
      .map((file) => file.slice(0, -'.json'.length))
      .filter((name) => existsSync(new URL(`${name}.chunks.txt`, fixtures)))
      .sort();
    if (names.length === 0) continue;
    // The folder is the translator's id, or a preset's name (`azure` for the `azure-openai` translator).
    const translator =
      builtinProviders.translators[provider] ??
      builtinProviders.translators[builtinProviders.presets[provider]?.translator ?? ''];
    if (translator === undefined) throw new Error(`providers/${provider} has fixtures but no translator '${provider}'`);
    for (const name of names) {
      cases.push({
        provider,
        name,
        translator,
        json: readFileSync(new URL(`${name}.json`, fixtures), 'utf8'),
        chunks: readFileSync(new URL(`${name}.chunks.txt`, fixtures), 'utf8'),
      });
    }
  }
  return cases;
}

/** The renderer context of the suite's streams: what the pipeline would pass, fixed. */
export const goldenRendererContext = { fallbackModel: 'fallback-model', estimatedInputTokens: 1000 };

/** A rendered output, with the window of Unix seconds during which it was rendered (see {@link normalizeVolatile}). */
export interface Rendered {
  text: string;
  clock: { from: number; to: number };
}

function clockSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** The non-streamed path: fixture JSON -> `translator.parseChatResponse` -> `dialect.renderResponse`. */
export function renderAnswer(providerCase: ProviderCase, entry: DialectEntry): Rendered {
  const from = clockSeconds();
  const parsed: CanonicalChatResponse = providerCase.translator.parseChatResponse(JSON.parse(providerCase.json));
  // As the pipeline does (chatOperation.parseAnswer): an answer that names no model (Cohere's) names the deployment's.
  const answer = parsed.model === '' ? { ...parsed, model: goldenRendererContext.fallbackModel } : parsed;
  const text = entry.renderResponse(answer);
  return { text, clock: { from, to: clockSeconds() } };
}

/** What a translated stream reported when it ended. */
export interface StreamEnding {
  usage: CanonicalUsage | undefined;
  failure: unknown;
}

/**
 * The streamed path: the fixture's bytes, in pieces of `pieceLength` bytes (whole when undefined), through
 * `createTranslatedStream` with the translator's reducer and the dialect's renderer, read as the client reads it.
 */
export async function renderStream(
  providerCase: ProviderCase,
  entry: DialectEntry,
  pieceLength?: number,
): Promise<Rendered & { endings: StreamEnding[] }> {
  const from = clockSeconds();
  const bytes = new TextEncoder().encode(providerCase.chunks);
  const step = pieceLength ?? bytes.length;
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let offset = 0; offset < bytes.length; offset += step)
        controller.enqueue(bytes.slice(offset, offset + step));
      controller.close();
    },
  });
  const endings: StreamEnding[] = [];
  const stream = source.pipeThrough(
    createTranslatedStream({
      reducer: providerCase.translator.chatStream,
      renderer: entry.createStreamRenderer(goldenRendererContext),
      providerName: providerCase.provider,
      onEnd: (usage, failure) => endings.push({ usage, failure }),
    }),
  );
  const text = await new Response(stream).text();
  return { text, clock: { from, to: clockSeconds() }, endings };
}

/**
 * Replaces the values the gateway stamps from the clock (`created`, `created_at` of a provider that sends none, such
 * as Anthropic, and a Responses answer's `completed_at`) with 0, and the ids it generates per call with stable ones
 * ({@link stableGeneratedIds}), so snapshots are stable; a provider's own recorded timestamp, outside the window the
 * output was rendered in, is kept.
 */
export function normalizeVolatile(rendered: Rendered): string {
  const text = rendered.text.replace(
    /"(created|created_at|completed_at)":(\d+)/g,
    (match, key: string, value: string) => {
      const seconds = Number(value);
      return seconds >= rendered.clock.from && seconds <= rendered.clock.to ? `"${key}":0` : match;
    },
  );
  return stableGeneratedIds(text);
}

/**
 * Replaces the random part of the Responses ids the gateway generates per call (`resp_` and 32 hex digits, see
 * `newResponseId`) with `golden` (then `golden2` ... should a text hold more than one), wherever it occurs: in the
 * response id and in the output item ids derived from it (`msg_<random>_1`, `fc_<random>_2`, `call_<random>_2`).
 * Upstream ids are kept.
 *
 * @example
 * stableGeneratedIds('{"id":"resp_0123456789abcdef0123456789abcdef","output":[{"id":"msg_0123456789abcdef0123456789abcdef_0"}]}');
 * // '{"id":"resp_golden","output":[{"id":"msg_golden_0"}]}'
 */
export function stableGeneratedIds(text: string): string {
  const randomParts = [...new Set(Array.from(text.matchAll(/\bresp_([0-9a-f]{32})\b/g), (match) => match[1] ?? ''))];
  return randomParts.reduce(
    (replaced, randomPart, index) => replaced.replaceAll(randomPart, index === 0 ? 'golden' : `golden${index + 1}`),
    text,
  );
}
