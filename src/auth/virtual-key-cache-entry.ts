import * as z from 'zod/mini';
import type { VirtualKeyRecord } from './virtual-key-record.ts';

/** The shared-cache key of a key record: `torii:key:<sha256 hex>`. */
export function sharedKeyCacheKey(hash: string): string {
  return `torii:key:${hash}`;
}

const nullableNumber = z.nullable(z.number());

const virtualKeyRecordSchema = z.object({
  id: z.string(),
  hash: z.string(),
  prefix: z.string(),
  name: z.string(),
  owner: z.nullable(z.string()),
  team: z.nullable(z.string()),
  metadata: z.record(z.string(), z.string()),
  allowedModelGroups: z.nullable(z.array(z.string())),
  rpmLimit: nullableNumber,
  tpmLimit: nullableNumber,
  budget: z.nullable(z.object({ amountUsd: z.number(), period: z.enum(['day', 'week', 'month', 'total']) })),
  expiresAt: nullableNumber,
  disabled: z.boolean(),
  revokedAt: nullableNumber,
  version: z.number(),
  createdAt: z.number(),
  updatedAt: z.number(),
});

const sharedEntrySchema = z.union([z.object({ missing: z.literal(true) }), z.object({ key: virtualKeyRecordSchema })]);

/** The shared-cache value for a record, or for a hash known not to exist (a negative entry). */
export function sharedKeyCacheEntry(record: VirtualKeyRecord | null): string {
  return JSON.stringify(record === null ? { missing: true } : { key: record });
}

/**
 * Reads a shared-cache value: the record, null for a negative entry, undefined for anything unreadable (another
 * version's format, a damaged value), which the caller treats as a miss.
 */
export function parseSharedKeyCacheEntry(value: string): VirtualKeyRecord | null | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  const result = sharedEntrySchema.safeParse(parsed);
  if (!result.success) return undefined;
  return 'key' in result.data ? result.data.key : null;
}
