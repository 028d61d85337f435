import { describe, expect, it } from 'vitest';
import { goldenDialects, type Outcome } from './dialect-entries.ts';
import {
  discoverProviderCases,
  normalizeVolatile,
  renderAnswer,
  renderStream,
  type ProviderCase,
} from './provider-cases.ts';

/**
 * Golden tests for every pair of client dialect (dialect-entries.ts) and provider fixture (provider-cases.ts), on the
 * pipeline's two paths: the non-streamed answer (`parseChatResponse` -> `renderResponse`) and the stream
 * (`createTranslatedStream` with the provider's reducer and the dialect's renderer). Each rendering is compared with
 * its snapshot in `__snapshots__/<dialect>/<provider>-<case>.json|.sse`; the stream must follow the dialect's grammar
 * and, read back by the dialect's reassembler, give the client the same answer as the non-streamed rendering.
 */

const providerCases = discoverProviderCases();

/** A pretty-printed JSON snapshot of a rendered body (volatile values already replaced). */
const jsonSnapshot = (text: string): string => `${JSON.stringify(JSON.parse(text), null, 2)}\n`;

/**
 * The texts must be equal, except that a JSON answer may differ in spacing: a provider's forced JSON tool streams
 * with the model's spacing while the non-streamed answer is re-serialised (providers/anthropic/anthropic-json-response.ts).
 */
function comparableText(text: string): unknown {
  if (!/^\s*[{[]/.test(text)) return text;
  try {
    return { json: JSON.parse(text) as unknown };
  } catch {
    return text;
  }
}

const comparable = (outcome: Outcome) => ({ ...outcome, text: comparableText(outcome.text) });

/**
 * Checks known to fail, by `<dialect>/<provider>-<case>`, with the reason: they run as `it.fails`, so the suite stays
 * green while the bug stands and turns red once it is fixed (then delete the entry and update the snapshots).
 */

describe('the fixture discovery', () => {
  it('finds the success cases of every provider, without the error fixtures', () => {
    const names = providerCases.map((providerCase) => `${providerCase.provider}/${providerCase.name}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'anthropic/text',
        'anthropic/tools',
        'anthropic/thinking',
        'openai-compatible/text',
        'openai-compatible/tools',
        'openai-compatible/reasoning',
      ]),
    );
    expect(names.filter((name) => name.includes('/error-'))).toEqual([]);
    // embeddings.json has no stream recording, so it is not a chat case.
    expect(names).not.toContain('openai-compatible/embeddings');
  });
});

describe.each(goldenDialects.map((entry) => [entry.id, entry] as const))('client dialect %s', (_id, entry) => {
  describe.each(providerCases.map((providerCase) => [providerCase.provider, providerCase.name, providerCase] as const))(
    '%s fixture %s',
    (provider, name, providerCase: ProviderCase) => {
      const snapshotPath = (extension: string) => `./__snapshots__/${entry.id}/${provider}-${name}.${extension}`;

      it('renders the non-streamed answer as its snapshot', async () => {
        const rendered = renderAnswer(providerCase, entry);
        await expect(jsonSnapshot(normalizeVolatile(rendered))).toMatchFileSnapshot(snapshotPath('json'));
      });

      it('renders the stream as its snapshot, however the upstream bytes are split', async () => {
        const whole = await renderStream(providerCase, entry);
        expect(whole.endings).toHaveLength(1);
        expect(whole.endings[0]?.failure).toBeUndefined();
        const text = normalizeVolatile(whole);
        await expect(text).toMatchFileSnapshot(snapshotPath('sse'));
        for (const pieceLength of [1, 7, 64])
          expect(normalizeVolatile(await renderStream(providerCase, entry, pieceLength))).toBe(text);
      });

      it("the stream follows the dialect's grammar", async () => {
        const { text } = await renderStream(providerCase, entry);
        expect(entry.checkStreamGrammar(text)).toEqual([]);
      });

      it('streamed and not streamed, the client gets the same answer', async () => {
        const streamed = entry.reassembler.fromStream((await renderStream(providerCase, entry)).text);
        const whole = entry.reassembler.fromResponse(renderAnswer(providerCase, entry).text);
        expect(comparable(streamed)).toEqual(comparable(whole));
        // Not vacuous: every recorded case answers something, but for an answer withheld by a content filter.
        const [choice] = providerCase.translator.parseChatResponse(JSON.parse(providerCase.json)).choices;
        if (choice?.finishReason.unified !== 'content-filter')
          expect(whole.text.length + whole.toolCalls.length).toBeGreaterThan(0);
      });

      it(`a '${entry.toolCallsStopReason}' stop comes with tool calls, streamed and not`, async () => {
        const streamed = entry.reassembler.fromStream((await renderStream(providerCase, entry)).text);
        const whole = entry.reassembler.fromResponse(renderAnswer(providerCase, entry).text);
        for (const outcome of [streamed, whole])
          if (outcome.stopReason === entry.toolCallsStopReason) expect(outcome.toolCalls).not.toEqual([]);
      });
    },
  );
});
