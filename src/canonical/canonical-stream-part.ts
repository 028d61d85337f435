import type { GatewayError } from '../errors.ts';
import type { CanonicalFinishReason } from './canonical-chat-response.ts';
import type { CanonicalUsage } from './canonical-usage.ts';

/**
 * What a provider's stream reducer yields and a dialect's stream renderer consumes. Parts are named
 * `<noun>-<action>`. Within one choice, parts arrive in order: text and reasoning deltas, tool inputs
 * (`tool-input-start` before that tool's `tool-input-delta`s), then `finish`. `usage` may arrive once, at any point
 * after `response-start` (usually last).
 */
export type CanonicalStreamPart =
  | { type: 'response-start'; id: string; model: string; created: number }
  | { type: 'text-delta'; choiceIndex: number; delta: string }
  | { type: 'reasoning-delta'; choiceIndex: number; delta: string }
  | { type: 'tool-input-start'; choiceIndex: number; toolIndex: number; id: string; name: string }
  | { type: 'tool-input-delta'; choiceIndex: number; toolIndex: number; delta: string }
  | { type: 'finish'; choiceIndex: number; finishReason: CanonicalFinishReason }
  | { type: 'usage'; usage: CanonicalUsage }
  | { type: 'error'; error: GatewayError };
