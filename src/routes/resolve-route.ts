import type { AuthContext } from '../auth/authenticator.ts';
import type { ProviderOperation } from '../canonical/provider-translator.ts';
import { GatewayError } from '../errors.ts';
import type { ResolvedModelGroup } from '../routing/resolved-deployment.ts';
import type { RouteDependencies } from './gateway-context.ts';
import type { RequestRecord } from './request-record.ts';

/**
 * Finds the model group a request names and checks the caller may use it and that some deployment of it serves the
 * operation (the deployment itself is picked per attempt, see serveWithRetries). Unknown groups answer 404
 * `model_not_found` as OpenAI does; groups outside the key's allow-list 403. A key that may call a group may be served
 * by the group's configured fallbacks: the operator chose them.
 */
export function resolveModelGroup(
  dependencies: Pick<RouteDependencies, 'modelGroups' | 'router'>,
  auth: AuthContext,
  model: string,
  operation: ProviderOperation,
  record: RequestRecord,
): ResolvedModelGroup {
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
  if (!dependencies.router.serves(group, operation)) {
    const providers = [...new Set(group.deployments.map((deployment) => deployment.target.providerName))].join(', ');
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'unsupported_operation',
      param: 'model',
      message: `The model ${quotedModel(model)} is served by ${providers}, which does not support ${operation}.`,
    });
  }
  return group;
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
