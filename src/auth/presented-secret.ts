/**
 * Reads the secret a client presents: `Authorization: Bearer <key>` (OpenAI SDK) or `x-api-key: <key>`
 * (Anthropic SDK). Returns undefined when neither is present.
 */
export function presentedSecret(headers: Headers): string | undefined {
  const authorization = headers.get('authorization');
  if (authorization !== null) {
    const match = /^\s*Bearer\s+(.+?)\s*$/i.exec(authorization);
    return match === null ? authorization.trim() : match[1];
  }
  const apiKey = headers.get('x-api-key');
  return apiKey === null ? undefined : apiKey.trim();
}
