import type { CanonicalChatRequest } from '../../src/canonical/index.ts';
import type { GeminiOptions } from './gemini-options.ts';

/** Gemini's `generationConfig.thinkingConfig`. `thinkingBudget` and `thinkingLevel` are never sent together. */
export interface GeminiThinkingConfig {
  thinkingBudget?: number;
  thinkingLevel?: 'MINIMAL' | 'LOW' | 'MEDIUM' | 'HIGH';
  includeThoughts?: boolean;
}

type Effort = Exclude<NonNullable<CanonicalChatRequest['reasoningEffort']>, 'none'>;

/**
 * Thinking budgets (Gemini 2.5) per reasoning effort, the convention other gateways follow; the largest stays within
 * the range of every 2.5 model (Flash and Flash-Lite take up to 24,576, Pro up to 32,768).
 */
export const geminiThinkingBudgetByEffort: Readonly<Record<Effort, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 24576,
};

/**
 * Thinking levels (Gemini 3) per reasoning effort; `none` is `MINIMAL`, Gemini 3's lowest (it cannot switch thinking
 * off). A model without a level (Gemini 3 Pro has only `LOW` and `HIGH`) answers Google's 400, which names it.
 */
export const geminiThinkingLevelByEffort: Readonly<
  Record<NonNullable<CanonicalChatRequest['reasoningEffort']>, NonNullable<GeminiThinkingConfig['thinkingLevel']>>
> = {
  none: 'MINIMAL',
  minimal: 'MINIMAL',
  low: 'LOW',
  medium: 'MEDIUM',
  high: 'HIGH',
  xhigh: 'HIGH',
};

/**
 * Maps the canonical reasoning settings to `thinkingConfig`, or undefined (the model's default, dynamic thinking,
 * thoughts not returned) when the client set no reasoning effort.
 *
 * - Budget style (Gemini 2.5, see `thinkingControl`): the client's explicit budget (Anthropic's
 *   `thinking.budget_tokens`) when it gave one, else {@link geminiThinkingBudgetByEffort}; `none` is budget 0
 *   (thinking off; Gemini 2.5 Pro cannot and answers 400).
 * - Level style (Gemini 3): {@link geminiThinkingLevelByEffort}; an explicit budget is not used (Google discourages
 *   budgets on Gemini 3).
 * - `includeThoughts: true` whenever the client asked for reasoning (any effort but `none`): the thought summaries
 *   then come back as reasoning, not text.
 *
 * @example
 * toGeminiThinkingConfig({ ...request, reasoningEffort: 'low' }, 'gemini-2.5-flash', {});
 * // { thinkingBudget: 2048, includeThoughts: true }
 */
export function toGeminiThinkingConfig(
  request: CanonicalChatRequest,
  model: string,
  options: GeminiOptions,
): GeminiThinkingConfig | undefined {
  const effort = request.reasoningEffort;
  if (effort === undefined) return undefined;
  const control = options.thinkingControl ?? 'auto';
  const useLevel = control === 'level' || (control === 'auto' && isGemini3(model));
  const includeThoughts = effort !== 'none';
  if (useLevel) {
    const config: GeminiThinkingConfig = { thinkingLevel: geminiThinkingLevelByEffort[effort] };
    if (includeThoughts) config.includeThoughts = true;
    return config;
  }
  if (effort === 'none') return { thinkingBudget: 0 };
  return { thinkingBudget: request.reasoningBudgetTokens ?? geminiThinkingBudgetByEffort[effort], includeThoughts };
}

/**
 * Whether a model name is Gemini 3 or later (`gemini-3-pro-preview`, `models/gemini-3.1-flash` ...). Aliases without
 * a version (`gemini-flash-latest`) use budgets, which Gemini 3 still accepts.
 */
function isGemini3(model: string): boolean {
  return /^(?:.*\/)?gemini-(?:[3-9]|[1-9]\d)(?:[.-]|$)/.test(model);
}
