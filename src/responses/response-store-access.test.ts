import { describe, expect, it } from 'vitest';
import { invalidRequest } from '../errors.ts';
import { boundedStoreCall } from './response-store-access.ts';

describe('boundedStoreCall', () => {
  it('passes a result through', async () => {
    expect(await boundedStoreCall(async () => 42)).toBe(42);
  });

  it('turns a failing store into a 503 response_store_unavailable with retry-after', async () => {
    const failure = await boundedStoreCall(async () => {
      throw new Error('connection refused');
    }).catch((error: unknown) => error);
    expect(failure).toMatchObject({
      status: 503,
      code: 'response_store_unavailable',
      headers: { 'retry-after': '1' },
    });
  });

  it('turns a store that never answers into the same 503 once the bound has passed', async () => {
    const hanging = boundedStoreCall(() => new Promise<never>(() => {}), 20).catch((error: unknown) => error);
    expect(await hanging).toMatchObject({ status: 503, code: 'response_store_unavailable' });
  });

  it("keeps the gateway's own errors as they are", async () => {
    const failure = await boundedStoreCall(async () => {
      throw invalidRequest('bad', 'x');
    }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ status: 400, param: 'x' });
  });
});
