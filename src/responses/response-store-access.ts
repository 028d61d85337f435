import { GatewayError, isGatewayError } from '../errors.ts';

/** How long a request waits for the response store (a read before routing, a write before the answer's end), ms. */
export const responseStoreTimeoutMs = 5_000;

/** The 503 when the response store (the database) fails or does not answer in time. */
export function responseStoreUnavailable(cause: unknown): GatewayError {
  return new GatewayError({
    status: 503,
    type: 'api_error',
    code: 'response_store_unavailable',
    retryable: true,
    cause,
    headers: { 'retry-after': '1' },
    message: 'The stored responses (the database) could not be reached. Try again shortly.',
  });
}

/**
 * Runs one response-store call within {@link responseStoreTimeoutMs}: a store that fails or hangs (the database is
 * down, a pool is exhausted) becomes a 503 `response_store_unavailable` instead of a 500 or a request that never ends.
 * The store call itself is not cancelled (the drivers have no way to); its late result is ignored.
 *
 * @example
 * const chain = await boundedStoreCall(() => store.chain(id, 256));
 */
export async function boundedStoreCall<Result>(
  call: () => Promise<Result>,
  timeoutMs: number = responseStoreTimeoutMs,
): Promise<Result> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`the response store did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([call(), timeout]);
  } catch (error) {
    throw isGatewayError(error) ? error : responseStoreUnavailable(error);
  } finally {
    clearTimeout(timer);
  }
}
