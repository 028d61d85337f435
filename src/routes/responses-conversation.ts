import type { AuthContext } from '../auth/authenticator.ts';
import type { ResponsesCall } from '../dialects/openai-responses/openai-responses-dialect.ts';
import { responseIdOf } from '../dialects/openai-responses/openai-responses-answer-check.ts';
import { responseOutputItems } from '../dialects/openai-responses/openai-responses-render-response.ts';
import { responsesInputItems } from '../dialects/openai-responses/openai-responses-request-schema.ts';
import { GatewayError, invalidRequest } from '../errors.ts';
import type { StoredResponse } from '../responses/response-store.ts';
import { boundedStoreCall } from '../responses/response-store-access.ts';
import { describeErrorSafely } from '../security/safe-error-description.ts';
import type { ModelRequestLifecycle, SettleContext } from './request-lifecycle.ts';

/**
 * The longest conversation `previous_response_id` continues, in responses: the gateway loads every earlier turn of a
 * translated conversation to send it again, so this bounds the memory one request can make it hold.
 */
export const maxConversationLength = 256;

/** The longest response id looked up; a longer one cannot exist (ids are `resp_` and 32 to 64 characters). */
export const maxResponseIdLength = 256;

/** The owner a stored response is recorded under: the virtual key's id, or null for the master key. */
export function responseOwner(auth: AuthContext): string | null {
  return auth.key?.id ?? null;
}

/** OpenAI's 404 for a response id that does not exist, has expired, or belongs to another key (indistinguishably). */
export function responseNotFound(id: string, param: string | null = null): GatewayError {
  const shown = id.length > 128 ? `${id.slice(0, 128)}…` : id;
  return new GatewayError({
    status: 404,
    type: 'invalid_request_error',
    code: 'response_not_found',
    param,
    message: `Response with id '${shown}' not found.`,
  });
}

const itemIdPrefixes: Record<string, string> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  reasoning: 'rs',
};

/**
 * A request's input items as stored and listed by `input_items`: every item gets an id (OpenAI lists items with
 * theirs), made from the response id and the item's position when the client sent none.
 */
export function identifiedInputItems(call: ResponsesCall): Record<string, unknown>[] {
  const suffix = call.id.replace(/^resp_/, '');
  return responsesInputItems(call.body).map((item, index) => {
    if (typeof item.id === 'string' && item.id.length > 0) return item;
    const prefix = itemIdPrefixes[String(item.type)] ?? 'item';
    return { ...item, id: `${prefix}_${suffix}_in${index}` };
  });
}

/** A translated conversation's earlier turns, oldest first: each response's input items, then its output. */
function historyOf(chain: readonly StoredResponse[]): Record<string, unknown>[] {
  return [...chain]
    .reverse()
    .flatMap((link) => [...link.inputItems, ...(link.response === null ? [] : responseOutputItems(link.response))]);
}

/**
 * The Responses API's conversation keeping around the model-request pipeline:
 *
 * - `previous_response_id` is looked up in the shared store. Another key's response, an expired or unknown one is the
 *   same 404. A response a native upstream made pins the request to that deployment (that provider account keeps
 *   the conversation) and is passed through; a response the gateway made has its conversation loaded (up to
 *   {@link maxConversationLength} turns, every one the caller's own) and the request is translated with it, whatever
 *   the deployment natively speaks.
 * - The answer is stored before the client gets its end (JSON answers, and a stream's final event): translated
 *   responses with their input and output items, native ones as the deployment they live on. `store: false` stores
 *   nothing. A failed (or, after 5 s, unanswered) store write is logged and the answer still delivered: the client
 *   paid for it. A store that fails or hangs while a conversation is looked up is a 503 `response_store_unavailable`.
 * - Without a store (no database), nothing is kept, answers say `store: false`, and `previous_response_id` is a 400.
 *
 * @example
 * app.post('/v1/responses', handleModelRequest(modelRoute(dependencies, openAIResponsesDialect, chatOperation, responsesLifecycle)));
 */
export const responsesLifecycle: ModelRequestLifecycle<ResponsesCall> = {
  async beforeRoute(call, { dependencies, auth }) {
    const store = dependencies.responseStore;
    if (store === undefined) call.body = { ...call.body, store: false };
    const previousId = call.body.previous_response_id;
    if (previousId === undefined || previousId === null) return undefined;
    if (store === undefined) {
      throw invalidRequest(
        'This gateway keeps no responses (it runs without a database), so previous_response_id cannot be ' +
          'continued; send the earlier turns as input items instead.',
        'previous_response_id',
      );
    }
    if (previousId.length > maxResponseIdLength) throw responseNotFound(previousId, 'previous_response_id');
    const chain = await boundedStoreCall(() => store.chain(previousId, maxConversationLength));
    const latest = chain[0];
    const owner = responseOwner(auth);
    if (latest === undefined || chain.some((link) => link.keyId !== owner)) {
      throw responseNotFound(previousId, 'previous_response_id');
    }
    if (latest.native) return { deploymentId: latest.deploymentId };
    if (chain.some((link) => link.native)) {
      throw invalidRequest(
        `The conversation of '${previousId}' began on a provider that keeps it upstream; continue it with the model ` +
          `group ${latest.modelGroup} from that response, not through previous_response_id of a translated turn.`,
        'previous_response_id',
      );
    }
    call.history = historyOf(chain);
    return { deploymentId: latest.deploymentId, translate: true };
  },

  settle(call, context) {
    if (call.settled) return undefined;
    const record = responseRecord(call, context);
    if (record === undefined) return undefined;
    call.settled = true;
    const store = context.dependencies.responseStore;
    if (store === undefined || call.body.store === false) return undefined;
    return boundedStoreCall(() => store.put(record)).catch((error: unknown) => {
      context.dependencies.services.logger.warn('a response could not be stored', {
        requestId: context.record.requestId,
        responseId: record.id,
        error: describeErrorSafely(error),
      });
    });
  },
};

/** What to store for a finished call, or undefined while its answer is not complete yet. */
function responseRecord(call: ResponsesCall, context: SettleContext): StoredResponse | undefined {
  const { dependencies, auth, deployment, record } = context;
  const base = {
    keyId: responseOwner(auth),
    modelGroup: record.modelGroup ?? call.body.model,
    deploymentId: deployment.id,
    previousResponseId: call.body.previous_response_id ?? null,
    createdAt: call.createdAt * 1000,
    expiresAt: Date.now() + dependencies.responseRetentionMs,
  };
  if (context.native) {
    const id =
      context.nativeAnswer === undefined
        ? (call.nativeResponse?.id as string | undefined)
        : responseIdOf(context.nativeAnswer);
    if (typeof id !== 'string' || id.length === 0) return undefined;
    return { ...base, id, native: true, inputItems: [], response: null };
  }
  const response = call.response ?? call.streamRenderer?.finalResponse();
  if (response === undefined) return undefined;
  return { ...base, id: call.id, native: false, inputItems: identifiedInputItems(call), response };
}
