/** `TORII_TEST_REDIS_URL` (tests/services/global-setup.ts starts a Redis and sets it), or an error: never a skip. */
export function testRedisUrl(): string {
  const url = process.env.TORII_TEST_REDIS_URL;
  if (!url) {
    throw new Error(
      'TORII_TEST_REDIS_URL is not set: this test needs a real Redis. Run it through vitest (its global setup ' +
        'starts one) or point the variable at a running server.',
    );
  }
  return url;
}
