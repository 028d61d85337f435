import type { DeploymentConfig } from './config-schema.ts';
import { resolveLiteLLMModel } from './litellm-providers.ts';
import {
  isPlainObject,
  kindOf,
  notTaken,
  readHeaders,
  readNonNegativeInteger,
  readNonNegativeNumber,
  readPositiveInteger,
  readPositiveNumber,
  readSecondsAsMilliseconds,
  readText,
  type LiteLLMFindings,
} from './litellm-values.ts';

/** One `model_list` entry as torii takes it: the group it joins and its deployment. */
export interface ConvertedLiteLLMDeployment {
  /** The entry's `model_name`: the model group clients name. */
  group: string;
  deployment: DeploymentConfig;
  /** Whether the entry set LiteLLM's `order` (its group then routes by torii's `priority`). */
  ordered: boolean;
  /** Whether the entry set its own `timeout` (the router-wide one then does not apply). */
  ownTimeout: boolean;
}

/** Request parameters LiteLLM lets a deployment default; torii leaves them to the client. */
const requestParameters = [
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'seed',
  'frequency_penalty',
  'presence_penalty',
  'response_format',
  'tools',
  'tool_choice',
  'extra_body',
  'reasoning_effort',
];

/** Why common `litellm_params` keys have no torii equivalent; any other untaken key gets a generic reason. */
const paramReasons: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    requestParameters.map((parameter) => [
      parameter,
      'torii sets no default request parameters per deployment; clients send them',
    ]),
  ),
  drop_params: 'torii answers a parameter the upstream cannot take with a 400 naming it',
  stream_timeout: 'set timeouts.headersMs or timeouts.streamIdleMs on the deployment',
  max_parallel_requests: 'torii has no per-deployment concurrency cap; rpm and tpm are taken',
  aws_profile_name: 'torii signs with access keys from the options or the AWS_* environment, not profiles',
  aws_role_name: 'torii does not assume roles; give access keys or a Bedrock API key',
  aws_session_name: 'torii does not assume roles; give access keys or a Bedrock API key',
  aws_web_identity_token: 'torii does not assume roles; give access keys or a Bedrock API key',
  tags: 'torii has no tag-based routing',
  mock_response: 'torii does not mock responses',
};

/** Why `model_info` keys have no torii equivalent (prices are taken from it). */
const modelInfoReasons: Readonly<Record<string, string>> = {
  id: 'torii names deployments <group>/<index>',
  mode: 'torii serves each client API the provider supports',
  base_model: "torii prices a deployment by its model or its own 'pricing'",
};

/** Cost keys (US dollars per token, in `litellm_params` or `model_info`) and torii's `pricing` field for each. */
const costFields: Readonly<Record<string, keyof NonNullable<DeploymentConfig['pricing']>>> = {
  input_cost_per_token: 'input',
  output_cost_per_token: 'output',
  cache_read_input_token_cost: 'cachedInput',
  cache_creation_input_token_cost: 'cacheWriteInput',
  output_cost_per_reasoning_token: 'reasoning',
};

const azureOptions = {
  api_version: 'apiVersion',
  azure_ad_token: 'entraToken',
  tenant_id: 'tenantId',
  client_id: 'clientId',
  client_secret: 'clientSecret',
};
const bedrockOptions = {
  aws_region_name: 'region',
  aws_access_key_id: 'accessKeyId',
  aws_secret_access_key: 'secretAccessKey',
  aws_session_token: 'sessionToken',
};
const vertexOptions = { vertex_project: 'project', vertex_location: 'location' };

/** Option keys taken per torii provider: LiteLLM's name -> torii's option name. */
const providerOptions: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  azure: azureOptions,
  bedrock: bedrockOptions,
  'bedrock-anthropic': bedrockOptions,
  vertex: vertexOptions,
  'vertex-anthropic': vertexOptions,
};

/** Providers that need no key (local servers, and clouds that sign or fetch tokens). */
const keyOptionalProviders = new Set([
  'vertex',
  'vertex-anthropic',
  'bedrock',
  'bedrock-anthropic',
  'ollama',
  'lmstudio',
  'vllm',
  'openai-compatible',
]);

/** `x * 1e6` without the float noise (`0.000005 * 1e6` is 4.999999999999999). */
const perMillion = (perToken: number) => Math.round(perToken * 1e12) / 1e6;

/**
 * Converts one LiteLLM `model_list` entry (at `path`, e.g. `model_list[3]`) into a torii deployment, recording in
 * `findings` every key it could not take and every value of the wrong type. Undefined when the entry cannot be used
 * at all (no model, a provider torii lacks, a wildcard): the reason is in `findings`.
 */
export function convertLiteLLMDeployment(
  entry: unknown,
  path: string,
  findings: LiteLLMFindings,
): ConvertedLiteLLMDeployment | undefined {
  if (!isPlainObject(entry)) {
    findings.problems.push(`${path}: expected a mapping with model_name and litellm_params, got ${kindOf(entry)}`);
    return undefined;
  }
  const problemsBefore = findings.problems.length;
  const group = readText(entry.model_name, `${path}.model_name`, findings);
  const params = entry.litellm_params;
  if (!isPlainObject(params)) {
    findings.problems.push(`${path}.litellm_params: expected a mapping, got ${kindOf(params)}`);
    return undefined;
  }
  const paramsPath = `${path}.litellm_params`;
  const model = readText(params.model, `${paramsPath}.model`, findings);
  for (const key of Object.keys(entry))
    if (key !== 'model_name' && key !== 'litellm_params' && key !== 'model_info')
      notTaken(findings, `${path}.${key}`, 'torii has no equivalent');
  if (group === undefined || model === undefined) return undefined;
  if (group === '*' || group.endsWith('/*')) {
    notTaken(findings, `${path}.model_name`, 'torii has no wildcard model routing; list each model');
    return undefined;
  }
  const apiBase =
    params.api_base === undefined ? undefined : readText(params.api_base, `${paramsPath}.api_base`, findings);
  const target = resolveLiteLLMModel(model, apiBase);
  if ('reason' in target) {
    notTaken(findings, path, target.reason);
    return undefined;
  }
  const { provider, mapping } = target;
  const deployment: DeploymentConfig = { provider, model: target.model };
  const options: Record<string, unknown> = {};
  const headers: Record<string, string> = {};
  const pricing: NonNullable<DeploymentConfig['pricing']> = {};
  const takenOptions = providerOptions[provider] ?? {};
  let ordered = false;
  let ownTimeout = false;

  if (apiBase !== undefined) deployment.baseURL = mapping.baseURL?.(apiBase) ?? apiBase;
  for (const [key, value] of Object.entries(params)) {
    const at = `${paramsPath}.${key}`;
    if (key === 'model' || key === 'api_base') continue;
    if (key === 'api_key') deployment.apiKey = readText(value, at, findings);
    else if (key === 'rpm') deployment.rpm = readPositiveInteger(value, at, findings);
    else if (key === 'tpm') deployment.tpm = readPositiveInteger(value, at, findings);
    else if (key === 'weight') deployment.weight = readPositiveNumber(value, at, findings);
    else if (key === 'order') {
      deployment.priority = readNonNegativeInteger(value, at, findings);
      ordered = true;
    } else if (key === 'timeout') {
      const totalMs = readSecondsAsMilliseconds(value, at, findings);
      if (totalMs !== undefined) deployment.timeouts = { totalMs };
      ownTimeout = true;
    } else if (key === 'num_retries' || key === 'max_retries') {
      const retries = readNonNegativeInteger(value, at, findings);
      if (retries !== undefined) deployment.retry = { retries: Math.min(retries, 10) };
      if (retries !== undefined && retries > 10) notTaken(findings, at, 'torii retries at most 10 times; 10 is used');
    } else if (key === 'extra_headers' || key === 'headers')
      Object.assign(headers, readHeaders(value, at, findings) ?? {});
    else if (key === 'organization') {
      const organization = readText(value, at, findings);
      if (organization !== undefined) headers['OpenAI-Organization'] = organization;
    } else if (key === 'aws_bedrock_runtime_endpoint' && provider.startsWith('bedrock'))
      deployment.baseURL = readText(value, at, findings);
    else if (key === 'vertex_credentials' && provider.startsWith('vertex'))
      takeVertexCredentials(value, at, options, findings);
    else if (Object.hasOwn(takenOptions, key)) options[takenOptions[key]!] = readText(value, at, findings);
    else if (Object.hasOwn(costFields, key)) takeCost(value, at, costFields[key]!, pricing, findings);
    else notTaken(findings, at, paramReasons[key] ?? `torii has no equivalent for ${provider} deployments`);
  }
  takeModelInfo(entry.model_info, `${path}.model_info`, pricing, findings);
  fillLiteLLMDefaults(provider, mapping.keyVariable, deployment, options, findings, {
    paramsPath,
    credentialsGiven: params.vertex_credentials !== undefined,
  });

  if (Object.keys(headers).length > 0) deployment.headers = headers;
  if (Object.keys(options).length > 0) deployment.options = options;
  if (Object.keys(pricing).length > 0) deployment.pricing = pricing;
  for (const key of Object.keys(deployment) as (keyof DeploymentConfig)[])
    if (deployment[key] === undefined) delete deployment[key];
  if (findings.problems.length > problemsBefore) return undefined;
  return { group, deployment, ordered, ownTimeout };
}

/** `vertex_credentials`: the service-account JSON (or a reference to it) is taken; a file path is not. */
function takeVertexCredentials(
  value: unknown,
  path: string,
  options: Record<string, unknown>,
  findings: LiteLLMFindings,
): void {
  if (isPlainObject(value)) {
    options.serviceAccount = value;
    return;
  }
  const text = readText(value, path, findings);
  if (text === undefined) return;
  if (text.startsWith('${') || text.trimStart().startsWith('{')) options.serviceAccount = text;
  else
    notTaken(
      findings,
      path,
      'a file path; give the service-account JSON itself as options.serviceAccount, e.g. from an environment variable',
    );
}

function takeCost(
  value: unknown,
  path: string,
  field: keyof NonNullable<DeploymentConfig['pricing']>,
  pricing: NonNullable<DeploymentConfig['pricing']>,
  findings: LiteLLMFindings,
): void {
  const perToken = readNonNegativeNumber(value, path, findings);
  if (perToken !== undefined) pricing[field] = perMillion(perToken);
}

/** `model_info`: prices are taken (under `litellm_params` ones); every other key is reported. */
function takeModelInfo(
  info: unknown,
  path: string,
  pricing: NonNullable<DeploymentConfig['pricing']>,
  findings: LiteLLMFindings,
): void {
  if (info === undefined || info === null) return;
  if (!isPlainObject(info)) {
    findings.problems.push(`${path}: expected a mapping, got ${kindOf(info)}`);
    return;
  }
  for (const [key, value] of Object.entries(info)) {
    const field = Object.hasOwn(costFields, key) ? costFields[key] : undefined;
    if (field !== undefined && pricing[field] === undefined)
      takeCost(value, `${path}.${key}`, field, pricing, findings);
    else if (field === undefined)
      notTaken(
        findings,
        `${path}.${key}`,
        modelInfoReasons[key] ?? 'torii reads model capabilities from the provider, not the config',
      );
  }
}

/**
 * What LiteLLM reads from its environment when an entry leaves it out, as `${NAME}` references: the provider's key,
 * Azure's endpoint and API version, Vertex's project and location. A Vertex entry without credentials is reported:
 * LiteLLM falls back to Google's application default credentials, torii does not.
 */
function fillLiteLLMDefaults(
  provider: string,
  keyVariable: string | undefined,
  deployment: DeploymentConfig,
  options: Record<string, unknown>,
  findings: LiteLLMFindings,
  entry: { paramsPath: string; credentialsGiven: boolean },
): void {
  if (provider === 'azure') {
    deployment.baseURL ??= '${AZURE_API_BASE}';
    options.apiVersion ??= '${AZURE_API_VERSION:-v1}';
    const entra = options.entraToken !== undefined || options.tenantId !== undefined;
    if (deployment.apiKey === undefined && !entra) deployment.apiKey = '${AZURE_API_KEY}';
    return;
  }
  if (provider === 'vertex' || provider === 'vertex-anthropic') {
    options.project ??= '${VERTEXAI_PROJECT}';
    options.location ??= '${VERTEXAI_LOCATION}';
    if (!entry.credentialsGiven && deployment.apiKey === undefined)
      notTaken(
        findings,
        `${entry.paramsPath}.vertex_credentials`,
        "absent: LiteLLM falls back to Google's application default credentials, torii does not; give " +
          'options.serviceAccount (the key JSON) or options.accessToken',
      );
    return;
  }
  if (deployment.apiKey === undefined && keyVariable !== undefined && !keyOptionalProviders.has(provider))
    deployment.apiKey = `\${${keyVariable}}`;
}
