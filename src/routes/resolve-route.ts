import type { AuthContext } from '../auth/authenticator.ts';
import type { ProviderOperation } from '../canonical/provider-translator.ts';
import { GatewayError } from '../errors.ts';
import { pickDeployment } from '../routing/pick-deployment.ts';
import type { ResolvedDeployment } from '../routing/resolved-deployment.ts';
import type { RouteDependencies } from './gateway-context.ts';
import type { RequestRecord } from './request-record.ts';

/**
 * Finds the model group a request names, checks the caller may use it and that it serves the operation, and picks
 * a deployment: `preferredDeploymentId` when the group has it (a conversation's own), else a weighted pick. Unknown
 * groups answer 404 `model_not_found` as OpenAI does; groups outside the key's allow-list 403.
 */
export function resolveDeployment(
  dependencies: Pick<RouteDependencies, 'modelGroups'>,
  auth: AuthContext,
  model: string,
  operation: ProviderOperation,
  record: RequestRecord,
  preferredDeploymentId?: string,
): ResolvedDeployment {
  const group = dependencies.modelGroups.get(model);
  if (group === undefined) throw modelNotFound(model);
  if (auth.allowedModelGroups !== 'all' && !auth.allowedModelGroups.has(model)) {
    throw new GatewayError({
      status: 403,
      type: 'permission_error',
      code: 'model_not_allowed',
      param: 'model',
      message: `This key may not use the model ${quotedModel(model)}.`,
    });
  }
  record.modelGroup = model;
  const preferred =
    preferredDeploymentId === undefined
      ? undefined
      : group.deployments.find((candidate) => candidate.id === preferredDeploymentId);
  const deployment = preferred ?? pickDeployment(group);
  record.provider = deployment.target.providerName;
  record.deployment = deployment;
  if (!deployment.translator.operations.includes(operation)) {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'unsupported_operation',
      param: 'model',
      message: `The model ${quotedModel(model)} is served by ${deployment.target.providerName}, which does not support ${operation}.`,
    });
  }
  return deployment;
}

/** The longest model name an error message repeats whole; a longer one (anything a client sends) is cut. */
export const maxQuotedModelLength = 256;

/**
 * A client-sent model name in backticks for an error message, cut to {@link maxQuotedModelLength} characters with its
 * full length noted, so a multi-megabyte name is not echoed back (or logged) whole.
 */
export function quotedModel(model: string): string {
  if (model.length <= maxQuotedModelLength) return `\`${model}\``;
  return `\`${model.slice(0, maxQuotedModelLength)}…\` (${model.length} characters)`;
}

/** OpenAI's 404 for a model that does not exist (or that the caller may not see). */
export function modelNotFound(model: string): GatewayError {
  return new GatewayError({
    status: 404,
    type: 'invalid_request_error',
    code: 'model_not_found',
    param: 'model',
    message: `The model ${quotedModel(model)} does not exist or you do not have access to it.`,
  });
}
