import type { ProviderPreset } from '../canonical/provider-translator.ts';
import type { DeploymentConfig } from './config-schema.ts';

/** One deployment as `check` shows it: where it goes, and where its secrets come from (never their values). */
export interface CheckedDeployment {
  provider: string;
  model: string;
  /** The base URL it calls (user info in it hidden), with `(preset)` when it is the provider's default. */
  baseURL: string;
  /** The key as `${NAME} (set)`, `(literal, hidden)`, or `(none)`. */
  apiKey: string;
  weight: number;
  priority: number | undefined;
  rpm: number | undefined;
  tpm: number | undefined;
  /** Header names only (values may be credentials). */
  headers: string[];
  /** Options, credentials masked like the key. */
  options: Record<string, string>;
  /** The LiteLLM `model_list` entry it came from. */
  origin: string | undefined;
  /** Variables the provider's preset reads for it (Bedrock's AWS_REGION, AWS_ACCESS_KEY_ID ...). */
  presetVariables: { name: string; status: 'set' | 'optional' }[];
}

/** What {@link describeDeployment} needs besides the deployment. */
export interface DeploymentDescriptionContext {
  environment: Readonly<Record<string, string | undefined>>;
  preset: ProviderPreset | undefined;
  origin: string | undefined;
}

const singleReference = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}$/;
const anyReference = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
/** Option names whose values are credentials. */
const secretOption = /key|secret|token|password|credential|serviceaccount/i;

/**
 * A secret as the report shows it: the variable it comes from and whether that is set, or `(literal, hidden)`. A
 * `${NAME:-default}` default is never shown (it may be a literal key).
 */
export function maskSecret(value: unknown, environment: Readonly<Record<string, string | undefined>>): string {
  if (value === undefined) return '(none)';
  if (typeof value !== 'string') return '(literal, hidden)';
  const single = singleReference.exec(value);
  if (single !== null) {
    const found = environment[single[1] as string];
    return `\${${single[1]}} (${found !== undefined && found !== '' ? 'set' : 'not set'})`;
  }
  const names = [...value.matchAll(anyReference)].map((match) => match[1]);
  return names.length === 0
    ? '(literal, hidden)'
    : `(text with ${names.map((name) => `\${${name}}`).join(', ')}, hidden)`;
}

/** A non-secret text with its references resolved where set (`${AZURE_API_BASE}` -> its value). */
function resolveText(value: string, environment: Readonly<Record<string, string | undefined>>): string {
  return value.replace(anyReference, (match, name: string, fallback: string | undefined) => {
    const found = environment[name];
    if (found !== undefined && found !== '') return found;
    return fallback ?? match;
  });
}

/** A URL without its user info (`https://user:password@host` -> `https://***@host`). */
function hideUserInfo(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1***@');
}

/** A short display of an option's value. */
function showOption(name: string, value: unknown, environment: Readonly<Record<string, string | undefined>>): string {
  if (secretOption.test(name)) return maskSecret(value, environment);
  const text = typeof value === 'string' ? resolveText(value, environment) : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * Describes a deployment as written (before `${NAME}` substitution) for the check report: base URL resolved (user
 * info hidden), key and credential options masked, header names only.
 */
export function describeDeployment(
  deployment: DeploymentConfig,
  context: DeploymentDescriptionContext,
): CheckedDeployment {
  const { environment, preset } = context;
  const ownBaseURL =
    deployment.baseURL === undefined ? undefined : hideUserInfo(resolveText(deployment.baseURL, environment));
  const presetBaseURL = preset?.baseURL;
  const baseURL =
    ownBaseURL ??
    (presetBaseURL === undefined ? '(none)' : presetBaseURL === '' ? '(from the region)' : `${presetBaseURL} (preset)`);
  const options: Record<string, string> = {};
  for (const [name, value] of Object.entries(deployment.options ?? {}))
    options[name] = showOption(name, value, environment);
  const status = (name: string) => {
    const found = environment[name];
    return found !== undefined && found !== '' ? ('set' as const) : ('optional' as const);
  };
  const presetVariables: CheckedDeployment['presetVariables'] = [];
  for (const [option, name] of Object.entries(preset?.optionEnvironmentVariables ?? {}))
    if (deployment.options?.[option] === undefined) presetVariables.push({ name, status: status(name) });
  const credentials = Object.entries(preset?.credentialEnvironmentVariables ?? {});
  const ownCredential = credentials.some(([option]) => deployment.options?.[option] !== undefined);
  if (deployment.apiKey === undefined && !ownCredential)
    for (const [, name] of credentials) presetVariables.push({ name, status: status(name) });
  return {
    provider: deployment.provider,
    model: deployment.model,
    baseURL,
    apiKey: maskSecret(deployment.apiKey, environment),
    weight: deployment.weight ?? 1,
    priority: deployment.priority,
    rpm: deployment.rpm,
    tpm: deployment.tpm,
    headers: Object.keys(deployment.headers ?? {}),
    options,
    origin: context.origin,
    presetVariables,
  };
}
