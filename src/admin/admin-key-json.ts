import type { VirtualKeyRecord } from '../auth/virtual-key-record.ts';

/** A key's state as one word, for people reading lists. */
export function keyStatus(record: VirtualKeyRecord, now: number): 'active' | 'disabled' | 'revoked' | 'expired' {
  if (record.revokedAt !== null) return 'revoked';
  if (record.disabled) return 'disabled';
  if (record.expiresAt !== null && record.expiresAt <= now) return 'expired';
  return 'active';
}

const isoOrNull = (time: number | null): string | null => (time === null ? null : new Date(time).toISOString());

/**
 * The admin API's JSON for a key (snake_case, ISO times). The secret appears only in the answers to create and
 * rotate, as `key`; everything else shows only `key_prefix`.
 */
export function keyJson(record: VirtualKeyRecord, now: number, secret?: string): Record<string, unknown> {
  return {
    object: 'virtual_key',
    id: record.id,
    ...(secret === undefined ? {} : { key: secret }),
    key_prefix: record.prefix,
    name: record.name,
    status: keyStatus(record, now),
    owner: record.owner,
    team: record.team,
    metadata: record.metadata,
    allowed_model_groups: record.allowedModelGroups,
    rpm_limit: record.rpmLimit,
    tpm_limit: record.tpmLimit,
    budget: record.budget === null ? null : { amount_usd: record.budget.amountUsd, period: record.budget.period },
    expires_at: isoOrNull(record.expiresAt),
    disabled: record.disabled,
    revoked_at: isoOrNull(record.revokedAt),
    version: record.version,
    created_at: isoOrNull(record.createdAt),
    updated_at: isoOrNull(record.updatedAt),
  };
}
