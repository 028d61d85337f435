import type { CanonicalChatFeature, CanonicalChatRequest } from '../canonical/canonical-chat-request.ts';

/** Whether a request uses a feature; one predicate per feature, the one place a new canonical field is added. */
const featureUse: Record<CanonicalChatFeature, (request: CanonicalChatRequest) => boolean> = {
  n: (request) => request.n !== undefined && request.n > 1,
  logprobs: (request) => request.logprobs === true || request.topLogprobs !== undefined,
  'top-k': (request) => request.topK !== undefined,
  files: (request) => request.messages.some((message) => hasPart(message, 'file')),
  images: (request) => request.messages.some((message) => hasPart(message, 'image')),
  'json-schema': (request) => request.responseFormat?.type === 'json_schema',
  tools: (request) => (request.tools?.length ?? 0) > 0,
  reasoning: (request) =>
    (request.reasoningEffort !== undefined && request.reasoningEffort !== 'none') ||
    request.reasoningBudgetTokens !== undefined,
  documents: (request) => (request.documents?.length ?? 0) > 0,
};

const featureOrder = Object.keys(featureUse) as CanonicalChatFeature[];

function hasPart(message: CanonicalChatRequest['messages'][number], type: 'file' | 'image'): boolean {
  if (message.role !== 'user' && message.role !== 'assistant') return false;
  return message.content.some((part) => part.type === type);
}

/**
 * The first feature a request uses that a translator does not declare (see ProviderTranslator.chatFeatures), or
 * undefined when it declares all it needs.
 */
export function unsupportedChatFeature(
  request: CanonicalChatRequest,
  supported: readonly CanonicalChatFeature[],
): CanonicalChatFeature | undefined {
  if (supported.length === featureOrder.length) return undefined;
  for (const feature of featureOrder) {
    if (!supported.includes(feature) && featureUse[feature](request)) return feature;
  }
  return undefined;
}
