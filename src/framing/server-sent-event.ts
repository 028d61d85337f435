/** One decoded Server-Sent Event. `event` is undefined when the stream sent no `event:` field. */
export interface ServerSentEvent {
  event: string | undefined;
  data: string;
  id: string | undefined;
}

/**
 * A decoded upstream stream event as providers see it: the SSE event name (or the AWS event-stream event type)
 * and the already-parsed JSON payload. Providers never see raw `data:` lines or the `[DONE]` sentinel.
 */
export interface DecodedStreamEvent {
  type: string | undefined;
  data: unknown;
}
