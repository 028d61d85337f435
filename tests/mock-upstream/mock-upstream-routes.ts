import type { IncomingHttpHeaders } from 'node:http';

/** The key, token and AWS access key id the mock accepts; configure deployments with them. */
export const mockUpstreamApiKey = 'sk-mock-upstream';
/** The AWS access key id Bedrock deployments sign with (the secret is any: the mock checks the key id and form). */
export const mockAwsAccessKeyId = 'AKIAMOCKUPSTREAM0001';

/** What the mock makes of one request: whose wire format it speaks and which recorded case it asks for. */
export interface RecognizedRequest {
  /** The `providers/<fixtures>/__fixtures__/` folder its answers come from (or the mock's own for completions and responses). */
  fixtures: string;
  /** How a streamed answer is framed. */
  framing: 'sse' | 'aws-event-stream';
  /** The recorded case (the upstream model name, or the operation for embeddings). */
  model: string;
  stream: boolean;
  /** Whether the request carries the credential this provider expects. */
  authorized: boolean;
  /** The error fixture to answer an unauthorized request with. */
  unauthorizedFixture: string;
}

const bearer = (headers: IncomingHttpHeaders) => headers.authorization?.replace(/^Bearer /, '');

/** A SigV4 `Authorization` header made with the mock's access key id (the signature itself is checked in unit tests). */
function signedByMockKey(headers: IncomingHttpHeaders): boolean {
  const authorization = headers.authorization ?? '';
  return (
    /^AWS4-HMAC-SHA256 Credential=AKIAMOCKUPSTREAM0001\/\d{8}\/[a-z0-9-]+\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/.test(
      authorization,
    ) && typeof headers['x-amz-date'] === 'string'
  );
}

/**
 * Recognises a request by the path each provider's API uses, as the translators build them:
 * - Gemini: `/v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse`, `:batchEmbedContents`
 *   (key in `x-goog-api-key`);
 * - Vertex AI: `/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent` ...
 *   (Gemini's fixtures) and `publishers/anthropic/models/{model}:rawPredict` / `:streamRawPredict` (Anthropic's), with
 *   a bearer token;
 * - Bedrock: `/model/{modelId}/converse`, `/converse-stream` (binary event stream), `/invoke` (Titan and Cohere
 *   embeddings, or Claude's Messages API) and `/invoke-with-response-stream`, SigV4;
 * - Cohere: `/v2/chat`, `/v2/embed` (bearer);
 * - Azure OpenAI: `/openai/deployments/{deployment}/chat/completions?api-version=...` and `/openai/v1/...` (`api-key`
 *   header, or a bearer token from the mock's Entra endpoint);
 * - Anthropic (`/messages`), OpenAI's completions and responses, and every other path as OpenAI-compatible.
 */
export function recognizeRequest(
  url: string,
  headers: IncomingHttpHeaders,
  body: Record<string, unknown>,
): RecognizedRequest {
  const [path = '/', query = ''] = url.split('?');
  const bodyModel = String(body.model);
  const streamFlag = body.stream === true;

  const google =
    /\/models\/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents|predict|rawPredict|streamRawPredict)$/.exec(
      path,
    );
  if (google !== null) {
    const [, model = '', method = ''] = google;
    const vertex = path.startsWith('/v1/projects/');
    const anthropic = path.includes('/publishers/anthropic/');
    if (anthropic) {
      return {
        fixtures: 'anthropic',
        framing: 'sse',
        model,
        stream: method === 'streamRawPredict',
        authorized: bearer(headers) === mockUpstreamApiKey,
        unauthorizedFixture: 'vertex/error-401',
      };
    }
    const embeddings = method === 'batchEmbedContents' || method === 'predict';
    return {
      // Vertex AI's text embeddings (`:predict`) answer in their own shape, recorded beside its Gemini cases.
      fixtures: vertex && method === 'predict' ? 'vertex' : 'gemini',
      framing: 'sse',
      model: embeddings ? (method === 'predict' ? 'gemini/embeddings' : 'embeddings') : model,
      stream: method === 'streamGenerateContent' && query.includes('alt=sse'),
      authorized: vertex ? bearer(headers) === mockUpstreamApiKey : headers['x-goog-api-key'] === mockUpstreamApiKey,
      unauthorizedFixture: vertex ? 'vertex/error-401' : 'gemini/error-400-api-key-invalid',
    };
  }

  const bedrock = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/.exec(path);
  if (bedrock !== null) {
    const [, encodedModel = '', method = ''] = bedrock;
    const model = decodeURIComponent(encodedModel);
    const embeddings = method === 'invoke' && /(^|\.)(cohere\.embed|amazon\.titan-embed)/.test(model);
    // InvokeModel of anything else is Claude's Messages API on Bedrock: its cases are under `anthropic/`.
    const invoked = method === 'invoke' || method === 'invoke-with-response-stream';
    return {
      fixtures: 'bedrock',
      framing: 'aws-event-stream',
      model: embeddings
        ? model.includes('cohere.')
          ? 'embeddings-cohere'
          : 'embeddings-titan'
        : invoked && !model.startsWith('error-')
          ? `anthropic/${model}`
          : model,
      stream: method === 'converse-stream' || method === 'invoke-with-response-stream',
      authorized: signedByMockKey(headers) || bearer(headers) === mockUpstreamApiKey,
      unauthorizedFixture: 'bedrock/error-403-access-denied',
    };
  }

  if (path === '/v2/chat' || path === '/v2/embed') {
    return {
      fixtures: 'cohere',
      framing: 'sse',
      model: path === '/v2/embed' ? 'embeddings' : bodyModel,
      stream: streamFlag,
      authorized: bearer(headers) === mockUpstreamApiKey,
      unauthorizedFixture: 'cohere/error-401',
    };
  }

  const azure = /^\/openai\/(?:deployments\/([^/]+)\/|v1\/)(chat\/completions|embeddings|responses)$/.exec(path);
  if (azure !== null) {
    const [, deployment, operation] = azure;
    return {
      fixtures: 'azure',
      framing: 'sse',
      model: operation === 'embeddings' ? 'embeddings' : (deployment ?? bodyModel),
      stream: streamFlag,
      authorized: headers['api-key'] === mockUpstreamApiKey || bearer(headers) === mockUpstreamApiKey,
      unauthorizedFixture: 'azure/error-401',
    };
  }

  const anthropic = path.endsWith('/messages') || path.endsWith('/messages/count_tokens');
  const fixtures = anthropic
    ? 'anthropic'
    : path === '/v1/completions'
      ? 'completions'
      : path === '/v1/responses'
        ? 'responses'
        : 'openai-compatible';
  return {
    fixtures,
    framing: 'sse',
    model: path.endsWith('/embeddings') ? 'embeddings' : bodyModel,
    stream: streamFlag,
    authorized: (anthropic ? headers['x-api-key'] : bearer(headers)) === mockUpstreamApiKey,
    unauthorizedFixture: `${anthropic ? 'anthropic' : 'openai-compatible'}/error-401`,
  };
}
