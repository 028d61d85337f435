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
