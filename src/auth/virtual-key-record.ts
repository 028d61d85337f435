/** How often a key's spend budget starts again from zero. `total` never resets. */
export type BudgetPeriod = 'day' | 'week' | 'month' | 'total';

/** A virtual key's spend budget, in US dollars per period. */
export interface KeyBudget {
  amountUsd: number;
  period: BudgetPeriod;
}

/**
 * A virtual key as stored (Postgres) and cached (memory, Redis, KV). The secret itself is never stored: only its
 * SHA-256 (`hash`, lowercase hex) and a short visible `prefix` for people to recognise it by. Times are epoch ms.
 * `version` grows by one on every change (update, revoke, rotate); caches never replace a record with an older one.
 */
export interface VirtualKeyRecord {
  /** Stable id, `key_...`; what the admin API, the ledger and limits use. */
  id: string;
  /** SHA-256 of the secret, lowercase hex. */
  hash: string;
  /** The first characters of the secret (`sk-torii-AbCd1234`), shown in lists. */
  prefix: string;
  name: string;
  /** Who owns the key (a user or service id of the operator's choosing). */
  owner: string | null;
  team: string | null;
  /** Free-form labels of the operator's choosing. */
  metadata: Record<string, string>;
  /** Model groups this key may call; null means every group. */
  allowedModelGroups: string[] | null;
  /** Requests per minute; null means unlimited. */
  rpmLimit: number | null;
  /** Tokens (input + output) per minute; null means unlimited. */
  tpmLimit: number | null;
  budget: KeyBudget | null;
  expiresAt: number | null;
  /** A disabled key is refused until enabled again. */
  disabled: boolean;
  /** A revoked key is refused for good. */
  revokedAt: number | null;
  version: number;
  createdAt: number;
  updatedAt: number;
}
