import type { VirtualKeyChanges } from '../auth/key-store.ts';
import type { VirtualKeyRecord } from '../auth/virtual-key-record.ts';
import type { virtualKeys } from './schema.ts';

/** A row of `virtual_keys` as Drizzle selects it. */
export type VirtualKeyRow = typeof virtualKeys.$inferSelect;

const epochMs = (date: Date | null): number | null => (date === null ? null : date.getTime());

/** The record a row stores (epoch-ms times; the two budget columns folded into one `budget`). */
export function virtualKeyFromRow(row: VirtualKeyRow): VirtualKeyRecord {
  return {
    id: row.id,
    hash: row.keyHash,
    prefix: row.keyPrefix,
    name: row.name,
    owner: row.owner,
    team: row.team,
    metadata: row.metadata,
    allowedModelGroups: row.allowedModelGroups,
    rpmLimit: row.rpmLimit,
    tpmLimit: row.tpmLimit,
    budget:
      row.budgetUsd === null || row.budgetPeriod === null
        ? null
        : { amountUsd: row.budgetUsd, period: row.budgetPeriod },
    expiresAt: epochMs(row.expiresAt),
    disabled: row.disabled,
    revokedAt: epochMs(row.revokedAt),
    version: row.version,
    createdAt: row.createdAt.getTime(),
    updatedAt: row.updatedAt.getTime(),
  };
}

/** The columns of `virtual_keys` a change may write, as both schemas (Postgres and SQLite) type them. */
export type VirtualKeyColumnValues = Partial<
  Pick<
    typeof virtualKeys.$inferInsert,
    | 'name'
    | 'owner'
    | 'team'
    | 'metadata'
    | 'allowedModelGroups'
    | 'rpmLimit'
    | 'tpmLimit'
    | 'budgetUsd'
    | 'budgetPeriod'
    | 'expiresAt'
    | 'disabled'
  >
>;

/** The columns a set of changes writes; fields absent from `changes` are left out, `null` clears. */
export function virtualKeyColumnsOf(changes: VirtualKeyChanges): VirtualKeyColumnValues {
  const values: VirtualKeyColumnValues = {};
  if (changes.name !== undefined) values.name = changes.name;
  if (changes.owner !== undefined) values.owner = changes.owner;
  if (changes.team !== undefined) values.team = changes.team;
  if (changes.metadata !== undefined) values.metadata = changes.metadata;
  if (changes.allowedModelGroups !== undefined) values.allowedModelGroups = changes.allowedModelGroups;
  if (changes.rpmLimit !== undefined) values.rpmLimit = changes.rpmLimit;
  if (changes.tpmLimit !== undefined) values.tpmLimit = changes.tpmLimit;
  if (changes.budget !== undefined) {
    values.budgetUsd = changes.budget?.amountUsd ?? null;
    values.budgetPeriod = changes.budget?.period ?? null;
  }
  if (changes.expiresAt !== undefined)
    values.expiresAt = changes.expiresAt === null ? null : new Date(changes.expiresAt);
  if (changes.disabled !== undefined) values.disabled = changes.disabled;
  return values;
}
