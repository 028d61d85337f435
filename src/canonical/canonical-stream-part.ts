import type { GatewayError } from '../errors.ts';
import type { CanonicalFinishReason } from './canonical-chat-response.ts';
import type { CanonicalUsage } from './canonical-usage.ts';

/**
 * What a provider's stream reducer yields and a dialect's stream renderer consumes. Parts are named
 * `<noun>-<action>`. Within one choice, parts arrive in order: text and reasoning deltas, tool inputs
 * (`tool-input-start` before that tool's `tool-input-delta`s and `tool-input-end`), then `finish`. `usage` may arrive
 * once or more (cumulative: the latest wins) at any point after `response-start`; a provider that reports the prompt's
 * tokens up front (Anthropic's `message_start`) sends a first `usage` before any content.
 *
 * The `-start` and `-end` parts mark block boundaries where the provider has them (Anthropic content blocks). They are
 * optional: a renderer that needs blocks opens one at the first delta of a kind and closes it when another kind
 * begins, so a reducer over a provider without blocks (OpenAI chunks) sends deltas only. `reasoning-end` carries the
 * reasoning's signature, which must reach an Anthropic client byte for byte.
 */
export type CanonicalStreamPart =
  | { type: 'response-start'; id: string; model: string; created: number }
  | { type: 'text-start'; choiceIndex: number }
  | { type: 'text-delta'; choiceIndex: number; delta: string }
  | { type: 'text-end'; choiceIndex: number }
  | { type: 'reasoning-start'; choiceIndex: number }
  | { type: 'reasoning-delta'; choiceIndex: number; delta: string }
  | { type: 'reasoning-end'; choiceIndex: number; signature?: string }
  | { type: 'tool-input-start'; choiceIndex: number; toolIndex: number; id: string; name: string }
  | { type: 'tool-input-delta'; choiceIndex: number; toolIndex: number; delta: string }
  | { type: 'tool-input-end'; choiceIndex: number; toolIndex: number }
  | { type: 'finish'; choiceIndex: number; finishReason: CanonicalFinishReason }
  | { type: 'usage'; usage: CanonicalUsage }
  | { type: 'error'; error: GatewayError };
