import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import type { GatewayLogger } from '../services.ts';

/**
 * The most tokens one request may report in any one field (input, output, total, cached, cache write, reasoning) by
 * default: 10,000,000, five times the largest context window offered today. Anything above is clamped to it.
 */
export const defaultMaxUsageTokens = 10_000_000;

/** What {@link sanitiseUsage} changed: the usage to account, and why. */
export interface UsageAdjustment {
  /** The usage with every count a whole number in bounds and the parts consistent; `raw` kept as reported. */
  usage: CanonicalUsage;
  /** One sentence per change, e.g. `inputTokens 1e+300 is above the cap of 10000000`. */
  problems: string[];
}

const countFields = [
  'inputTokens',
  'outputTokens',
  'totalTokens',
  'cachedInputTokens',
  'cacheWriteInputTokens',
  'reasoningTokens',
] as const;

type CountField = (typeof countFields)[number];

function isWholeCountWithin(value: unknown, maxTokens: number): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= maxTokens;
}

/** The quick answer for the common case: every count a whole number in bounds, and the parts consistent. */
function isSane(usage: CanonicalUsage, maxTokens: number): boolean {
  const { inputTokens, outputTokens, totalTokens, cachedInputTokens, cacheWriteInputTokens, reasoningTokens } = usage;
  if (!isWholeCountWithin(inputTokens, maxTokens) || !isWholeCountWithin(outputTokens, maxTokens)) return false;
  if (totalTokens !== inputTokens + outputTokens || !isWholeCountWithin(totalTokens, maxTokens)) return false;
  const cached = cachedInputTokens ?? 0;
  if (cachedInputTokens !== undefined && (!isWholeCountWithin(cached, maxTokens) || cached > inputTokens)) return false;
  if (
    cacheWriteInputTokens !== undefined &&
    (!isWholeCountWithin(cacheWriteInputTokens, maxTokens) || cacheWriteInputTokens > inputTokens - cached)
  )
    return false;
  if (
    reasoningTokens !== undefined &&
    (!isWholeCountWithin(reasoningTokens, maxTokens) || reasoningTokens > outputTokens)
  )
    return false;
  return true;
}

/** A count made whole and brought within `[0, maxTokens]`, with the reason when it changed. */
function boundedCount(field: CountField, value: unknown, maxTokens: number, problems: string[]): number {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    problems.push(`${field} ${String(value)} is not a finite number`);
    return 0;
  }
  if (value > maxTokens) {
    problems.push(`${field} ${value} is above the cap of ${maxTokens}`);
    return maxTokens;
  }
  if (value < 0) {
    problems.push(`${field} ${value} is negative`);
    return 0;
  }
  if (!Number.isInteger(value)) {
    problems.push(`${field} ${value} is not a whole number`);
    return Math.round(value);
  }
  return value;
}

/**
 * Validates the usage an upstream reported and clamps what is out of bounds, so that cost, rate limits, budgets and
 * the ledger only ever see whole token counts between 0 and `maxTokens`:
 * - a count that is not a number, NaN or negative becomes 0; above `maxTokens` (Infinity included) it becomes
 *   `maxTokens`; a fraction is rounded;
 * - cached input tokens are at most the input tokens, cache-write tokens at most the input tokens left uncached,
 *   reasoning tokens at most the output tokens (canonical accounting counts them inside those totals);
 * - the total is the input plus the output tokens.
 * Returns undefined when the usage is sane (the common case, answered without allocating); otherwise the clamped
 * usage and one sentence per change.
 *
 * @example
 * const adjustment = sanitiseUsage({ inputTokens: 1e300, outputTokens: 5, totalTokens: 1e300 }, 10_000_000);
 * // adjustment.usage: { inputTokens: 10_000_000, outputTokens: 5, totalTokens: 10_000_005 }
 */
export function sanitiseUsage(usage: CanonicalUsage, maxTokens: number): UsageAdjustment | undefined {
  if (isSane(usage, maxTokens)) return undefined;
  const problems: string[] = [];
  const inputTokens = boundedCount('inputTokens', usage.inputTokens, maxTokens, problems);
  const outputTokens = boundedCount('outputTokens', usage.outputTokens, maxTokens, problems);
  const reportedTotal = boundedCount('totalTokens', usage.totalTokens, maxTokens, problems);
  const totalTokens = inputTokens + outputTokens;
  if (reportedTotal !== totalTokens)
    problems.push(`totalTokens ${reportedTotal} is not inputTokens + outputTokens (${totalTokens})`);
  const clamped: CanonicalUsage = { inputTokens, outputTokens, totalTokens };
  let cached = 0;
  if (usage.cachedInputTokens !== undefined) {
    cached = boundedCount('cachedInputTokens', usage.cachedInputTokens, maxTokens, problems);
    if (cached > inputTokens) {
      problems.push(`cachedInputTokens ${cached} is more than inputTokens (${inputTokens})`);
      cached = inputTokens;
    }
    clamped.cachedInputTokens = cached;
  }
  if (usage.cacheWriteInputTokens !== undefined) {
    let cacheWrite = boundedCount('cacheWriteInputTokens', usage.cacheWriteInputTokens, maxTokens, problems);
    if (cacheWrite > inputTokens - cached) {
      problems.push(
        `cacheWriteInputTokens ${cacheWrite} is more than inputTokens less cachedInputTokens (${inputTokens - cached})`,
      );
      cacheWrite = inputTokens - cached;
    }
    clamped.cacheWriteInputTokens = cacheWrite;
  }
  if (usage.reasoningTokens !== undefined) {
    let reasoning = boundedCount('reasoningTokens', usage.reasoningTokens, maxTokens, problems);
    if (reasoning > outputTokens) {
      problems.push(`reasoningTokens ${reasoning} is more than outputTokens (${outputTokens})`);
      reasoning = outputTokens;
    }
    clamped.reasoningTokens = reasoning;
  }
  if (usage.raw !== undefined) clamped.raw = usage.raw;
  return { usage: clamped, problems };
}

/** Who reported a usage, for the warning. */
export interface UsageContext {
  requestId: string;
  /** The config's provider name. */
  provider: string | undefined;
  /** The deployment id (`<model group>/<index>`). */
  deployment: string | undefined;
  /** The upstream's model name. */
  upstreamModel: string | undefined;
}

/** {@link sanitiseUsage} with a bound and a rate-limited warning log, as the request path uses it. */
export interface UsageSanity {
  /** Sanitises `usage`; when something was adjusted, logs it (at most `warningsPerMinute` lines a minute). */
  check(usage: CanonicalUsage, context: UsageContext): UsageAdjustment | undefined;
}

/** Options of {@link createUsageSanity}. */
export interface UsageSanityOptions {
  /** The most tokens per field of one request (default {@link defaultMaxUsageTokens}). */
  maxTokens?: number;
  logger: GatewayLogger;
  /** A monotonic clock in ms. */
  now: () => number;
  /** Warning lines per minute at most; the rest are counted and the count logged with the next line (default 10). */
  warningsPerMinute?: number;
}

/** A number as a log line can show it: JSON has no NaN or Infinity. */
function loggable(value: unknown): unknown {
  return typeof value === 'number' && !Number.isFinite(value) ? String(value) : value;
}

function countsOf(usage: CanonicalUsage): Record<string, unknown> {
  const counts: Record<string, unknown> = {};
  for (const field of countFields) if (usage[field] !== undefined) counts[field] = loggable(usage[field]);
  return counts;
}

/**
 * The request path's usage check: one per gateway, applied in `finishRequest` before metrics, rate limits, budgets
 * and the ledger. A hostile upstream cannot flood the logs: past `warningsPerMinute` lines in a minute, adjustments
 * are only counted, and the next line logged says how many were left out.
 *
 * @example
 * const usageSanity = createUsageSanity({ logger: services.logger, now: services.now });
 * const adjustment = usageSanity.check(record.usage, { requestId, provider, deployment });
 * if (adjustment !== undefined) record.usage = adjustment.usage;
 */
export function createUsageSanity(options: UsageSanityOptions): UsageSanity {
  const maxTokens = options.maxTokens ?? defaultMaxUsageTokens;
  const warningsPerMinute = options.warningsPerMinute ?? 10;
  const { logger, now } = options;
  let windowStart = Number.NEGATIVE_INFINITY;
  let loggedInWindow = 0;
  let suppressed = 0;
  return {
    check(usage, context) {
      const adjustment = sanitiseUsage(usage, maxTokens);
      if (adjustment === undefined) return undefined;
      const time = now();
      if (time - windowStart >= 60_000) {
        windowStart = time;
        loggedInWindow = 0;
      }
      if (loggedInWindow >= warningsPerMinute) {
        suppressed++;
        return adjustment;
      }
      loggedInWindow++;
      logger.warn('Upstream usage out of bounds; clamped before accounting', {
        requestId: context.requestId,
        provider: context.provider,
        deployment: context.deployment,
        upstreamModel: context.upstreamModel,
        reported: countsOf(usage),
        recorded: countsOf(adjustment.usage),
        problems: adjustment.problems,
        suppressedWarnings: suppressed,
      });
      suppressed = 0;
      return adjustment;
    },
  };
}
