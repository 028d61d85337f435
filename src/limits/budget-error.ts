import type { KeyBudget } from '../auth/virtual-key-record.ts';
import { GatewayError } from '../errors.ts';
import type { BudgetPeriodWindow } from './budget-period.ts';

const periodNames = { day: 'daily', week: 'weekly', month: 'monthly', total: 'total' } as const;

/**
 * The 429 for a key that has spent its budget, shaped as OpenAI's own quota error (`insufficient_quota`) with code
 * `budget_exceeded`. It carries `x-should-retry: false`, which the OpenAI and Anthropic SDKs honour, so clients do not
 * retry a request that cannot succeed until the period resets.
 */
export function budgetExceededError(budget: KeyBudget, spentUsd: number, window: BudgetPeriodWindow): GatewayError {
  const spent = `$${spentUsd.toFixed(2)} of the $${budget.amountUsd.toFixed(2)} ${periodNames[budget.period]} budget`;
  const when =
    window.end === null
      ? 'The budget does not reset; ask an administrator to raise it.'
      : `It resets at ${new Date(window.end).toISOString().replace('.000Z', 'Z')}.`;
  return new GatewayError({
    status: 429,
    type: 'insufficient_quota',
    code: 'budget_exceeded',
    message: `This API key has exceeded its budget: spent ${spent}. ${when}`,
    headers: { 'x-should-retry': 'false' },
  });
}
