/**
 * Gemini's function calls and the canonical tool call id.
 *
 * The canonical tool call needs an id, and clients (the OpenAI SDK, Anthropic's) echo it back verbatim with the tool
 * result and the assistant turn; they keep nothing else. Gemini gives what it needs back in two pieces:
 *
 * - `functionCall.id`, optional: Gemini often sends none. Then the gateway generates
 *   `call_<responseId>_<candidate index>_<call index>` ({@link generatedToolCallIdPrefix} marks it), deterministic for
 *   a given answer, so a stream and the same answer non-streamed name their calls alike. Ids starting with `call_`
 *   (generated ones, and OpenAI's from a conversation begun there) are not sent back to Gemini as
 *   `functionCall.id`/`functionResponse.id`: Gemini never issued them. Other ids are, on both parts alike.
 * - `thoughtSignature` (Gemini 2.5 and 3 thinking models), on a part, usually the first `functionCall` part of a
 *   turn: Gemini 3 answers 400 unless it comes back on that same part in the next request. It travels inside the id:
 *   `<id>__thought__<signature in base64url without padding>` ({@link thoughtSignatureSeparator}). base64url keeps the
 *   id to `[A-Za-z0-9_-]`, the alphabet every client and provider accepts; decoding restores Google's standard base64
 *   with padding, byte for byte. The id part never contains the separator (Gemini's ids are opaque tokens without
 *   it, generated ids are built without it), so the first occurrence splits the two.
 *
 * The cost: an id carrying a signature is long (a signature is hundreds of characters), which some upstreams reject
 * should the conversation move there (OpenAI caps tool call ids at 40 characters).
 */

/** Separates a tool call id from the thought signature encoded after it. */
export const thoughtSignatureSeparator = '__thought__';

/** The prefix of the ids the gateway generates for Gemini function calls that came without one. */
export const generatedToolCallIdPrefix = 'call_';

/**
 * Gemini's documented placeholder signature for function calls Gemini did not produce (a history from another
 * model): sent on the first function call of a model turn that carries no signature, so Gemini 3 does not refuse it.
 */
export const skipThoughtSignatureValidator = 'skip_thought_signature_validator';

/** A canonical tool call id taken apart. */
export interface DecodedToolCallId {
  /** The id without the signature. */
  id: string;
  /** The thought signature in Google's standard base64, when the id carried one. */
  thoughtSignature: string | undefined;
  /** Whether the id has the generated ids' prefix (`call_`), so it is not Gemini's to receive. */
  generated: boolean;
}

/**
 * The canonical id of one Gemini function call: Gemini's own id, or a generated one, with the part's thought
 * signature appended when there is one.
 *
 * @example
 * encodeToolCallId({ geminiId: undefined, responseId: 'r1', candidateIndex: 0, callIndex: 1, thoughtSignature: 'CiQB+/8=' });
 * // 'call_r1_0_1__thought__CiQB-_8'
 */
export function encodeToolCallId(call: {
  geminiId: string | undefined;
  responseId: string | undefined;
  candidateIndex: number;
  callIndex: number;
  thoughtSignature: string | undefined;
}): string {
  const id =
    call.geminiId !== undefined && call.geminiId.length > 0
      ? call.geminiId
      : `${generatedToolCallIdPrefix}${call.responseId ?? 'gemini'}_${call.candidateIndex}_${call.callIndex}`;
  if (call.thoughtSignature === undefined || call.thoughtSignature.length === 0) return id;
  return `${id}${thoughtSignatureSeparator}${toBase64Url(call.thoughtSignature)}`;
}

/**
 * Takes a canonical tool call id apart into the id and the thought signature encoded in it (see
 * {@link encodeToolCallId}). Ids from elsewhere come back unchanged, without a signature.
 *
 * @example
 * decodeToolCallId('call_r1_0_1__thought__CiQB-_8');
 * // { id: 'call_r1_0_1', thoughtSignature: 'CiQB+/8=', generated: true }
 */
export function decodeToolCallId(canonicalId: string): DecodedToolCallId {
  const separatorAt = canonicalId.indexOf(thoughtSignatureSeparator);
  const id = separatorAt === -1 ? canonicalId : canonicalId.slice(0, separatorAt);
  const encoded = separatorAt === -1 ? '' : canonicalId.slice(separatorAt + thoughtSignatureSeparator.length);
  return {
    id,
    thoughtSignature: encoded.length > 0 ? fromBase64Url(encoded) : undefined,
    generated: id.startsWith(generatedToolCallIdPrefix),
  };
}

function toBase64Url(base64: string): string {
  return base64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(base64Url: string): string {
  const base64 = base64Url.replace(/-/g, '+').replace(/_/g, '/');
  return base64 + '='.repeat((4 - (base64.length % 4)) % 4);
}
