import { describe, expect, it } from 'vitest';
import type { UpstreamRequest } from '../../src/canonical/index.ts';
import { authorizeBedrockRequest } from './bedrock-signing.ts';
import { buildBedrockChatRequest } from './bedrock-request.ts';

/**
 * An independent SigV4 implementation, written from AWS's specification ("Create a signed AWS API request") with Web
 * Crypto, checked first against AWS's published test-suite vectors (get-vanilla, post-vanilla), then used to recompute
 * the signatures the translator's requests carry.
 */
const encoder = new TextEncoder();
const hex = (bytes: ArrayBuffer) =>
  [...new Uint8Array(bytes)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
const sha256 = async (text: string) => hex(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
async function hmac(key: ArrayBuffer | Uint8Array<ArrayBuffer>, text: string): Promise<ArrayBuffer> {
  const imported = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return crypto.subtle.sign('HMAC', imported, encoder.encode(text));
}
/** RFC 3986 encoding of everything but the unreserved characters, as SigV4 requires. */
const uriEncode = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);

interface SignatureInput {
  method: string;
  url: string;
  /** Header values by lower-case name; `host` is taken from the URL. */
  headers: Record<string, string>;
  signedHeaders: string[];
  body: string;
  secretAccessKey: string;
  datetime: string;
  region: string;
  service: string;
}

async function referenceSignature(input: SignatureInput): Promise<string> {
  const url = new URL(input.url);
  // Every service but S3: each path segment (as sent, already encoded once) is URI-encoded again.
  const canonicalUri = url.pathname.split('/').map(uriEncode).join('/');
  const canonicalQuery = [...url.searchParams]
    .map(([key, value]) => `${uriEncode(key)}=${uriEncode(value)}`)
    .sort()
    .join('&');
  const value = (name: string) =>
    name === 'host' ? url.host : (input.headers[name] ?? '').trim().replace(/\s+/g, ' ');
  const canonicalHeaders = input.signedHeaders.map((name) => `${name}:${value(name)}\n`).join('');
  const canonicalRequest = [
    input.method,
    canonicalUri,
    canonicalQuery,
    canonicalHeaders,
    input.signedHeaders.join(';'),
    await sha256(input.body),
  ].join('\n');
  const day = input.datetime.slice(0, 8);
  const scope = `${day}/${input.region}/${input.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', input.datetime, scope, await sha256(canonicalRequest)].join('\n');
  let key = await hmac(encoder.encode(`AWS4${input.secretAccessKey}`), day);
  for (const part of [input.region, input.service, 'aws4_request']) key = await hmac(key, part);
  return hex(await hmac(key, stringToSign));
}

/** Recomputes a signed request's signature from what will be sent: its URL, headers and exact body. */
async function verify(request: UpstreamRequest, secretAccessKey: string, region: string): Promise<void> {
  const authorization = request.headers.authorization ?? '';
  const match =
    /^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      authorization,
    );
  expect(match).not.toBeNull();
  const [, scopeRegion, service, signedHeaders = '', signature] = match ?? [];
  expect(scopeRegion).toBe(region);
  expect(service).toBe('bedrock');
  const expected = await referenceSignature({
    method: request.method,
    url: request.url,
    headers: request.headers,
    signedHeaders: signedHeaders.split(';'),
    body: request.body ?? '',
    secretAccessKey,
    datetime: request.headers['x-amz-date'] ?? '',
    region,
    service: 'bedrock',
  });
  expect(signature).toBe(expected);
}

const suiteSecret = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';

describe('the reference SigV4 implementation', () => {
  // https://github.com/awslabs/aws-c-auth/tree/main/tests/aws-signing-test-suite/v4 (get-vanilla, post-vanilla)
  it.each([
    ['GET', '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31'],
    ['POST', '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b'],
  ])('reproduces AWS test-suite vector %s-vanilla', async (method, signature) => {
    const computed = await referenceSignature({
      method,
      url: 'https://example.amazonaws.com/',
      headers: { 'x-amz-date': '20150830T123600Z' },
      signedHeaders: ['host', 'x-amz-date'],
      body: '',
      secretAccessKey: suiteSecret,
      datetime: '20150830T123600Z',
      region: 'us-east-1',
      service: 'service',
    });
    expect(computed).toBe(signature);
  });
});

describe('authorizeBedrockRequest', () => {
  const url =
    'https://bedrock-runtime.us-west-2.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse';
  const body = '{"messages":[{"role":"user","content":[{"text":"Hé, ☃"}]}]}';

  it('signs the path (a model id with :), the host, the date, the token and the exact body', async () => {
    const signed = await authorizeBedrockRequest(
      { url, headers: { 'content-type': 'application/json', 'x-custom': 'kept' }, body },
      {
        kind: 'sigv4',
        accessKeyId: 'AKIDEXAMPLE',
        secretAccessKey: suiteSecret,
        sessionToken: 'token/+=',
        region: 'us-west-2',
      },
      '20251001T120000Z',
    );
    expect(signed).toMatchObject({ url, method: 'POST', body });
    expect(signed.headers).toMatchObject({
      'x-amz-date': '20251001T120000Z',
      'x-amz-security-token': 'token/+=',
      'content-type': 'application/json',
      'x-custom': 'kept',
    });
    expect(signed.headers.authorization).toContain(
      'Credential=AKIDEXAMPLE/20251001/us-west-2/bedrock/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token;x-custom,',
    );
    await verify(signed, suiteSecret, 'us-west-2');
  });

  it('a signature does not survive a changed body', async () => {
    const signed = await authorizeBedrockRequest(
      { url, headers: {}, body },
      { kind: 'sigv4', accessKeyId: 'AKIDEXAMPLE', secretAccessKey: suiteSecret, region: 'us-west-2' },
    );
    await expect(verify({ ...signed, body: `${body} ` }, suiteSecret, 'us-west-2')).rejects.toThrow();
  });

  it('sends a Bedrock API key as a bearer token, unsigned', async () => {
    const signed = await authorizeBedrockRequest(
      { url, headers: { 'content-type': 'application/json' }, body },
      { kind: 'bearer', apiKey: 'ABSKexample' },
    );
    expect(signed.headers).toEqual({ 'content-type': 'application/json', authorization: 'Bearer ABSKexample' });
  });
});

describe('buildBedrockChatRequest signing', () => {
  it('signs what it sends, for a local base URL with the region from the options', async () => {
    const request = await buildBedrockChatRequest(
      {
        model: 'claude',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
        stream: true,
        streamIncludeUsage: false,
      },
      {
        providerName: 'bedrock',
        baseURL: 'http://127.0.0.1:4010',
        model: 'arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.anthropic.claude-3-7-sonnet-20250219-v1:0',
        apiKey: undefined,
        headers: { 'X-Team': 'search' },
        options: { region: 'eu-west-1', accessKeyId: 'AKIDEXAMPLE', secretAccessKey: suiteSecret },
      },
    );
    expect(request.url).toBe(
      'http://127.0.0.1:4010/model/arn%3Aaws%3Abedrock%3Aeu-west-1%3A123456789012%3Ainference-profile%2Feu.anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse-stream',
    );
    expect(request.headers['x-team']).toBe('search');
    await verify(request, suiteSecret, 'eu-west-1');
  });
});
