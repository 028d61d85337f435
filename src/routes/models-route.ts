import { authenticateRequest } from './authenticate-request.ts';
import type { RouteDependencies } from './gateway-context.ts';
import type { GatewayContext } from '../gateway-environment.ts';
import { modelNotFound } from './resolve-route.ts';

function modelEntry(name: string, created: number): Record<string, unknown> {
  return { id: name, object: 'model', created, owned_by: 'torii' };
}

/** `GET /v1/models`: the model groups the calling key may use. */
export function createModelsHandler(dependencies: RouteDependencies) {
  return async (c: GatewayContext): Promise<Response> => {
    c.var.record.operation = 'models';
    const auth = await authenticateRequest(dependencies, c.req.raw, c.var.record);
    const data = [...dependencies.modelGroups.keys()]
      .filter((name) => auth.allowedModelGroups === 'all' || auth.allowedModelGroups.has(name))
      .map((name) => modelEntry(name, dependencies.startedAtSeconds));
    return Response.json({ object: 'list', data });
  };
}

/** `GET /v1/models/{model}`: one model group, or 404 as OpenAI answers. */
export function createModelHandler(dependencies: RouteDependencies) {
  return async (c: GatewayContext): Promise<Response> => {
    c.var.record.operation = 'models';
    const auth = await authenticateRequest(dependencies, c.req.raw, c.var.record);
    const name = c.req.param('model') ?? '';
    const allowed = auth.allowedModelGroups === 'all' || auth.allowedModelGroups.has(name);
    if (!dependencies.modelGroups.has(name) || !allowed) throw modelNotFound(name);
    return Response.json(modelEntry(name, dependencies.startedAtSeconds));
  };
}
