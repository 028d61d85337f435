/**
 * Where a usage event's token counts came from: the provider, the provider with counts clamped because they were
 * out of bounds (see sanitiseUsage), the gateway's estimate from the request size, or nowhere.
 */
export type UsageSource = 'provider' | 'provider-adjusted' | 'estimate' | 'none';

/**
 * One row of the usage ledger: exactly one per request that reached routing, keyed by `requestId` (writes are
 * idempotent on it). Times are epoch ms; durations ms; cost US dollars.
 */
export interface UsageEvent {
  /** The gateway-made request id: unique per request, the same in every retried write of this event. */
  requestId: string;
  /**
   * The client's own `x-request-id`, for correlation only: clients choose it, so many rows may share one. Absent in
   * events spilled by an older version (read as null).
   */
  clientRequestId?: string | null;
  /** The virtual key's id; null for the master key. */
  keyId: string | null;
  modelGroup: string | null;
  /** The config's provider name (`groq`), null when the request never reached a deployment. */
  provider: string | null;
  /** The deployment's index-free name: `<provider>/<upstream model>` as configured. */
  deployment: string | null;
  upstreamModel: string | null;
  operation: string;
  /**
   * The client API the request came in (`openai-chat`, `openai-embeddings`, `anthropic-messages` ...). Absent in events
   * spilled by an older version (read as null).
   */
  clientApi?: string | null;
  /** The group whose deployment served (a fallback group, or the requested one); absent in older events. */
  servedModelGroup?: string | null;
  /** Upstream attempts the request made (retries and fallbacks included); absent in older events. */
  attempts?: number | null;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  reasoningTokens: number;
  usageSource: UsageSource;
  costUsd: number;
  /** HTTP status the client got (200 for streams that started). */
  status: number;
  stream: boolean;
  latencyMs: number;
  /** Time to the first streamed byte; null for non-streamed responses. */
  timeToFirstTokenMs: number | null;
  overheadMs: number;
  startedAt: number;
  finishedAt: number;
}

/**
 * Where batches of usage events are written: Postgres through Drizzle (one multi-row statement per batch,
 * `ON CONFLICT (request_id) DO NOTHING`), or a Cloudflare Queue on Workers. `write` either stores every event of the
 * batch or throws; a retry of the same batch never double-counts.
 */
export interface UsageSink {
  write(events: readonly UsageEvent[]): Promise<void>;
}

/**
 * Local overflow for usage events the sink could not take in time (Node: append-only files on disk). Spilled
 * events are replayed into the sink once it accepts writes again and removed only after that succeeded.
 */
export interface UsageSpill {
  append(events: readonly UsageEvent[]): Promise<void>;
  /** Hands spilled events to `write` oldest first, removing each chunk only after `write` resolved. */
  replay(write: (events: readonly UsageEvent[]) => Promise<void>): Promise<number>;
  /** How many events are spilled now. */
  size(): Promise<number>;
}
