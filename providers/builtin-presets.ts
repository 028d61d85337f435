import type { ProviderPreset } from '../src/canonical/index.ts';
import { openAICompatiblePresets } from './openai-compatible/openai-compatible-presets.ts';

/**
 * Every provider name a config can use, as data only (no translator code): each names its translator, its default
 * base URL, its key variable and defaults. Shared by the eager registry (Node, Deno, the library) and the Worker's
 * lazily loaded one, so both accept the same names. OpenAI comes first: the embedded default's groups keep the order
 * they always had (OpenAI's, then Anthropic's, ...).
 */
export const builtinPresets: Record<string, ProviderPreset> = {
  openai: openAICompatiblePresets.openai!,
  anthropic: {
    translator: 'anthropic',
    baseURL: 'https://api.anthropic.com/v1',
    apiKeyEnvironmentVariable: 'ANTHROPIC_API_KEY',
    models: ['claude-sonnet-4-5', 'claude-haiku-4-5'],
  },
  ...openAICompatiblePresets,
  gemini: {
    translator: 'gemini',
    baseURL: 'https://generativelanguage.googleapis.com/v1beta',
    apiKeyEnvironmentVariable: 'GEMINI_API_KEY',
    models: ['gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-embedding-001'],
  },
  // Vertex AI: the host follows the deployment's `location` while the base URL is this default; a project, a
  // location and a service account (or an access token) come from the deployment's options.
  vertex: { translator: 'vertex', baseURL: 'https://aiplatform.googleapis.com', keyOptional: true },
  'vertex-anthropic': {
    translator: 'vertex-anthropic',
    baseURL: 'https://aiplatform.googleapis.com',
    keyOptional: true,
  },
  // Bedrock: an empty base URL is `https://bedrock-runtime.{region}.amazonaws.com` for the options' region; IAM
  // credentials (access key, secret, session token) in the options, or a Bedrock API key as `apiKey`.
  bedrock: {
    optionEnvironmentVariables: { region: 'AWS_REGION' },
    credentialEnvironmentVariables: {
      accessKeyId: 'AWS_ACCESS_KEY_ID',
      secretAccessKey: 'AWS_SECRET_ACCESS_KEY',
      sessionToken: 'AWS_SESSION_TOKEN',
    },
    translator: 'bedrock',
    baseURL: '',
    apiKeyEnvironmentVariable: 'AWS_BEARER_TOKEN_BEDROCK',
    keyOptional: true,
  },
  // Claude on Bedrock through InvokeModel, in Anthropic's own Messages format: Anthropic Messages clients (Claude Code)
  // are passed through; same endpoint, credentials and environment as `bedrock`.
  'bedrock-anthropic': {
    optionEnvironmentVariables: { region: 'AWS_REGION' },
    credentialEnvironmentVariables: {
      accessKeyId: 'AWS_ACCESS_KEY_ID',
      secretAccessKey: 'AWS_SECRET_ACCESS_KEY',
      sessionToken: 'AWS_SESSION_TOKEN',
    },
    translator: 'bedrock-anthropic',
    baseURL: '',
    apiKeyEnvironmentVariable: 'AWS_BEARER_TOKEN_BEDROCK',
    keyOptional: true,
  },
  // Azure OpenAI: the base URL is the resource's endpoint (`https://{resource}.openai.azure.com`); the model is the
  // deployment name; `api-key`, or Microsoft Entra ID (a static token or client credentials) from the options.
  azure: {
    translator: 'azure-openai',
    baseURL: undefined,
    apiKeyEnvironmentVariable: 'AZURE_OPENAI_API_KEY',
    keyOptional: true,
  },
  cohere: {
    translator: 'cohere',
    baseURL: 'https://api.cohere.com',
    apiKeyEnvironmentVariable: 'CO_API_KEY',
    models: ['command-a-03-2025', 'embed-v4.0'],
  },
};
