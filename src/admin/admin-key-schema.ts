import * as z from 'zod/mini';
import '../validation/zod-issues.ts';
import { adminLabel, adminText } from './admin-text.ts';

/**
 * Request bodies of the admin key API (snake_case, like the rest of the OpenAI-style API). Strict: an unknown
 * field is a 400, so a typo (`rpm_limt`) never silently does nothing. Text is checked for what the database cannot
 * store (see admin-text.ts), so a bad value is a 400 naming its field, never a failed query.
 */

const label = adminLabel(200);
const positiveLimit = z.int().check(z.gte(1), z.lte(1_000_000_000));

const budgetSchema = z.strictObject({
  amount_usd: z.number().check(z.gt(0), z.lte(1_000_000_000)),
  period: z.enum(['day', 'week', 'month', 'total']),
});

const keyFields = {
  owner: z.nullish(label),
  team: z.nullish(label),
  metadata: z.optional(
    z
      .record(adminLabel(100), adminText(1000))
      .check(z.refine((value) => Object.keys(value).length <= 50, 'at most 50 metadata entries')),
  ),
  allowed_model_groups: z.nullish(z.array(z.string().check(z.minLength(1))).check(z.maxLength(1000))),
  rpm_limit: z.nullish(positiveLimit),
  tpm_limit: z.nullish(positiveLimit),
  budget: z.nullish(budgetSchema),
  expires_at: z.nullish(z.iso.datetime({ offset: true })),
};

/** `POST /admin/keys`. */
export const createKeyRequestSchema = z.strictObject({ name: label, ...keyFields });

/** `PATCH /admin/keys/{id}`: every field optional; `disabled` switches a key off and on again. */
export const updateKeyRequestSchema = z.strictObject({
  name: z.optional(label),
  ...keyFields,
  disabled: z.optional(z.boolean()),
});

/** `GET /admin/keys` query. */
export const listKeysQuerySchema = z.strictObject({
  limit: z.optional(z.string().check(z.regex(/^(?:[1-9]\d?|100)$/, 'a whole number from 1 to 100'))),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(500))),
  owner: z.optional(label),
  team: z.optional(label),
});

/** A validated create body. */
export type CreateKeyRequest = z.infer<typeof createKeyRequestSchema>;
/** A validated update body. */
export type UpdateKeyRequest = z.infer<typeof updateKeyRequestSchema>;
