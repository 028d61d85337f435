/**
 * One response the gateway keeps for the OpenAI Responses API: for a translated response, its input and output items,
 * so `previous_response_id`, `GET /v1/responses/{id}` and `input_items` work against providers that keep no
 * conversation; for a response a native Responses upstream made (and keeps), only which deployment, and so which
 * provider account, it came from, so later calls reach the same account on every instance.
 */
export interface StoredResponse {
  /** The response id the client saw (`resp_…`): the gateway's own for translated responses, the upstream's for native. */
  id: string;
  /** The virtual key that created it (null for the master key); only that key may read, continue or delete it. */
  keyId: string | null;
  /** The model group the client asked for. */
  modelGroup: string;
  /** The deployment that served it (`<group>/<index>`). */
  deploymentId: string;
  /** True when the upstream made and keeps the response (pass-through); its items are not stored here. */
  native: boolean;
  /** The response this one continued, when it did (for walking a conversation back). */
  previousResponseId: string | null;
  /** The request's own input items, normalised (empty for native responses). */
  inputItems: readonly Record<string, unknown>[];
  /** The complete Response object as the client got it (null for native responses). */
  response: Record<string, unknown> | null;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms after which the response is gone (reads treat it as absent; the store deletes it lazily). */
  expiresAt: number;
}

/**
 * Where stored responses live: Postgres through Drizzle (PGlite by default, Postgres, Hyperdrive on Workers), shared
 * by every instance, so a conversation continues wherever its next request lands. Reads return nothing for expired
 * rows. Ownership is checked by the caller, which answers another key's response with the same 404 as a missing one.
 *
 * @example
 * await store.put({ id: 'resp_1', keyId: 'key_a', modelGroup: 'fast', deploymentId: 'fast/0', native: false,
 *   previousResponseId: null, inputItems, response, createdAt: Date.now(), expiresAt: Date.now() + 30 * 86_400_000 });
 * const chain = await store.chain('resp_1', 100); // newest first
 */
export interface ResponseStore {
  /** Stores a response (an existing id is replaced: the same id is only ever written by the request that made it). */
  put(response: StoredResponse): Promise<void>;
  /** The response, or undefined when it does not exist or has expired. */
  get(id: string): Promise<StoredResponse | undefined>;
  /**
   * The response and the ones it continued, newest first, following `previousResponseId` up to `maxLength` responses
   * in one round trip; stops at the first missing or expired link.
   */
  chain(id: string, maxLength: number): Promise<StoredResponse[]>;
  /** Deletes a response; true when it existed (and had not expired). */
  delete(id: string): Promise<boolean>;
}

/** How long stored responses are kept by default: 30 days, as OpenAI keeps them. */
export const defaultResponseRetentionMs = 30 * 24 * 60 * 60 * 1000;
