export type * from './canonical-chat-request.ts';
export type * from './canonical-chat-response.ts';
export type * from './canonical-usage.ts';
export type * from './canonical-stream-part.ts';
export type * from './canonical-embeddings.ts';
export type * from './provider-translator.ts';
