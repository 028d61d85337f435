import { Hono, type Context } from 'hono';
import type * as z from 'zod/mini';
import type { KeyAdministration } from '../auth/key-administration.ts';
import type { NewVirtualKey, VirtualKeyChanges } from '../auth/key-store.ts';
import { GatewayError, invalidRequest } from '../errors.ts';
import type { GatewayEnvironment } from '../gateway-environment.ts';
import { readJsonObjectBody } from '../routes/read-json-body.ts';
import { firstValidationProblem } from '../validation/zod-issues.ts';
import { keyJson } from './admin-key-json.ts';
import { isAdminLabel } from './admin-text.ts';
import {
  createKeyRequestSchema,
  listKeysQuerySchema,
  updateKeyRequestSchema,
  type CreateKeyRequest,
  type UpdateKeyRequest,
} from './admin-key-schema.ts';
import { requireMaster, type AdminDependencies } from './admin-access.ts';

/** The 404 for an id no key has; an id that no key could have (see {@link keyIdOf}) is not echoed. */
function keyNotFound(id: string | undefined): GatewayError {
  return new GatewayError({
    status: 404,
    type: 'invalid_request_error',
    code: 'key_not_found',
    param: 'id',
    message: id === undefined ? 'No key with that id.' : `No key with id '${id}'.`,
  });
}

/** The longest id the API looks up (ids it makes are 24 characters). */
const maxKeyIdLength = 200;

/**
 * The key id in the path. One no key can have (control characters, NUL included, which the database cannot even
 * compare; unpaired surrogates; over 200 characters) is a 404 at once, without a query.
 */
function keyIdOf(c: Context<GatewayEnvironment>): string {
  const id = c.req.param('id') ?? '';
  if (id.length > maxKeyIdLength || !isAdminLabel(id)) throw keyNotFound(undefined);
  return id;
}

function parseWith<Schema extends z.ZodMiniType>(schema: Schema, value: unknown): z.infer<Schema> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const problem = firstValidationProblem(result.error.issues);
    throw invalidRequest(problem.message, problem.param);
  }
  return result.data;
}

/** Checks the parts zod cannot see: model groups named in the config, expiry in the future. */
function checkAgainstGateway(
  body: CreateKeyRequest | UpdateKeyRequest,
  dependencies: AdminDependencies,
): { expiresAt: number | null | undefined } {
  body.allowed_model_groups?.forEach((group, index) => {
    if (!dependencies.modelGroups.has(group))
      throw invalidRequest(
        `Unknown model group '${group}'. Known groups: ${[...dependencies.modelGroups.keys()].join(', ')}.`,
        `allowed_model_groups.[${index}]`,
      );
  });
  if (body.expires_at === undefined || body.expires_at === null) return { expiresAt: body.expires_at };
  const expiresAt = Date.parse(body.expires_at);
  if (expiresAt <= dependencies.now())
    throw invalidRequest('expires_at must be in the future; to stop a key now, revoke or disable it.', 'expires_at');
  return { expiresAt };
}

function fieldsOf(body: CreateKeyRequest | UpdateKeyRequest, expiresAt: number | null | undefined): VirtualKeyChanges {
  const fields: VirtualKeyChanges = {};
  if (body.name !== undefined) fields.name = body.name;
  if (body.owner !== undefined) fields.owner = body.owner;
  if (body.team !== undefined) fields.team = body.team;
  if (body.metadata !== undefined) fields.metadata = body.metadata;
  if (body.allowed_model_groups !== undefined) fields.allowedModelGroups = body.allowed_model_groups;
  if (body.rpm_limit !== undefined) fields.rpmLimit = body.rpm_limit;
  if (body.tpm_limit !== undefined) fields.tpmLimit = body.tpm_limit;
  if (body.budget !== undefined)
    fields.budget = body.budget === null ? null : { amountUsd: body.budget.amount_usd, period: body.budget.period };
  if (expiresAt !== undefined) fields.expiresAt = expiresAt;
  if ('disabled' in body && body.disabled !== undefined) fields.disabled = body.disabled;
  return fields;
}

/**
 * The admin key API, master key only: create (the secret is in the answer, once), list (newest first, cursor
 * paging, owner/team filters), get, update, revoke, rotate. Every body is validated in full before anything is
 * changed, so a bad request never changes anything.
 *
 * @example
 * app.route('/admin', createAdminKeysRoutes({ keys, modelGroups, authenticator, bodyLimitBytes, now: Date.now }));
 */
export function createAdminKeysRoutes(dependencies: AdminDependencies & { keys: KeyAdministration }) {
  const { keys, now } = dependencies;
  const app = new Hono<GatewayEnvironment>();
  app.use('*', async (c, next) => {
    c.var.record.operation = 'admin';
    await requireMaster(dependencies, c.req.raw);
    await next();
  });

  app.post('/keys', async (c) => {
    const body = parseWith(createKeyRequestSchema, await readJsonObjectBody(c.req.raw, dependencies));
    const { expiresAt } = checkAgainstGateway(body, dependencies);
    const issued = await keys.create({ ...fieldsOf(body, expiresAt), name: body.name } as NewVirtualKey);
    return c.json(keyJson(issued.record, now(), issued.secret), 201);
  });

  app.get('/keys', async (c) => {
    const query = parseWith(listKeysQuerySchema, c.req.query());
    const page = await keys.list({
      limit: query.limit === undefined ? 20 : Number(query.limit),
      ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
      ...(query.owner === undefined ? {} : { owner: query.owner }),
      ...(query.team === undefined ? {} : { team: query.team }),
    });
    const time = now();
    return c.json({
      object: 'list',
      data: page.keys.map((record) => keyJson(record, time)),
      has_more: page.nextCursor !== undefined,
      next_cursor: page.nextCursor ?? null,
    });
  });

  app.get('/keys/:id', async (c) => {
    const id = keyIdOf(c);
    const record = await keys.get(id);
    if (record === undefined) throw keyNotFound(id);
    return c.json(keyJson(record, now()));
  });

  app.patch('/keys/:id', async (c) => {
    const id = keyIdOf(c);
    const body = parseWith(updateKeyRequestSchema, await readJsonObjectBody(c.req.raw, dependencies));
    if (Object.keys(body).length === 0) throw invalidRequest('Send at least one field to change.', null);
    const { expiresAt } = checkAgainstGateway(body, dependencies);
    const record = await keys.update(id, fieldsOf(body, expiresAt));
    if (record === undefined) throw keyNotFound(id);
    return c.json(keyJson(record, now()));
  });

  const revoke = async (id: string) => {
    const record = await keys.revoke(id);
    if (record === undefined) throw keyNotFound(id);
    return keyJson(record, now());
  };
  app.post('/keys/:id/revoke', async (c) => c.json(await revoke(keyIdOf(c))));
  app.delete('/keys/:id', async (c) => c.json(await revoke(keyIdOf(c))));

  app.post('/keys/:id/rotate', async (c) => {
    const id = keyIdOf(c);
    const issued = await keys.rotate(id);
    if (issued === undefined) {
      const existing = await keys.get(id);
      if (existing === undefined) throw keyNotFound(id);
      throw new GatewayError({
        status: 409,
        type: 'invalid_request_error',
        code: 'key_revoked',
        param: 'id',
        message: `Key '${id}' is revoked; a revoked key cannot be rotated.`,
      });
    }
    return c.json(keyJson(issued.record, now(), issued.secret));
  });
  return app;
}
