export * from './server-sent-event.ts';
export * from './sse-decoder.ts';
export * from './sse-encoder.ts';
export * from './parse-json.ts';
export * from './decode-json-events.ts';
export * from './stream-event-decoder.ts';
