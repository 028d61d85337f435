/** The result of {@link parseJson}. */
export type JsonParseResult = { ok: true; value: unknown } | { ok: false; error: string };

/** Parses JSON text without throwing; the one place the gateway calls `JSON.parse` on foreign text. */
export function parseJson(text: string): JsonParseResult {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}
