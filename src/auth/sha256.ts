const textEncoder = new TextEncoder();

/** SHA-256 of a string's UTF-8 bytes, with Web Crypto (available on every runtime the gateway targets). */
export async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', textEncoder.encode(text)));
}
