import type { CanonicalChatFeature, CanonicalChatRequest } from '../canonical/canonical-chat-request.ts';
import type { CanonicalChatResponse } from '../canonical/canonical-chat-response.ts';
import type { CanonicalEmbeddingsRequest, CanonicalEmbeddingsResponse } from '../canonical/canonical-embeddings.ts';
import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import type {
  ChatStreamReducer,
  ProviderOperation,
  ProviderTranslator,
  UpstreamRequest,
  UpstreamTarget,
} from '../canonical/provider-translator.ts';
import { invalidRequest } from '../errors.ts';
import { unsupportedChatFeature } from './chat-features.ts';

/**
 * One kind of model call (chat, embeddings) as the pipeline drives a translator through it: build the upstream
 * request from the canonical one, read the canonical answer back. A dialect says how clients spell requests; an
 * operation says which translator verbs serve them.
 */
export interface ModelOperation<Canonical, Answer> {
  readonly id: ProviderOperation;
  /**
   * Builds the translated upstream request; throws a 400 for what the deployment cannot serve, naming the client's
   * parameter (`featureParameters` is the dialect's spelling of each canonical feature).
   */
  buildRequest(
    translator: ProviderTranslator,
    canonical: Canonical,
    target: UpstreamTarget,
    featureParameters: Readonly<Record<CanonicalChatFeature, string>>,
  ): UpstreamRequest | Promise<UpstreamRequest>;
  /** Reads a successful upstream body; an answer that names no model (Cohere's) names the deployment's upstream model. */
  parseAnswer(translator: ProviderTranslator, body: unknown, target: UpstreamTarget): Answer;
  usageOf(answer: Answer): CanonicalUsage | undefined;
  /** The translator's stream reducer, for operations that stream. */
  streamReducer?(translator: ProviderTranslator): ChatStreamReducer;
}

/** Chat: every chat dialect (OpenAI chat, Anthropic Messages) is served through it. */
export const chatOperation: ModelOperation<CanonicalChatRequest, CanonicalChatResponse> = {
  id: 'chat',
  buildRequest(translator, canonical, target, featureParameters) {
    const unsupported = unsupportedChatFeature(canonical, translator.chatFeatures);
    if (unsupported !== undefined) {
      const param = featureParameters[unsupported];
      throw invalidRequest(
        `The deployment serving this model (${target.providerName}) does not support \`${param}\`.`,
        param,
        'unsupported_parameter',
      );
    }
    return translator.buildChatRequest(canonical, target);
  },
  parseAnswer(translator, body, target) {
    const answer = translator.parseChatResponse(body);
    return answer.model === '' ? { ...answer, model: target.model } : answer;
  },
  usageOf: (answer) => answer.usage,
  streamReducer: (translator) => translator.chatStream,
};

/** Embeddings. */
export const embeddingsOperation: ModelOperation<CanonicalEmbeddingsRequest, CanonicalEmbeddingsResponse> = {
  id: 'embeddings',
  buildRequest(translator, canonical, target) {
    if (translator.buildEmbeddingsRequest === undefined || translator.parseEmbeddingsResponse === undefined) {
      throw invalidRequest(
        `The model \`${canonical.model}\` is served by ${target.providerName}, which does not support embeddings.`,
        'model',
        'unsupported_operation',
      );
    }
    return translator.buildEmbeddingsRequest(canonical, target);
  },
  // buildRequest refused translators without the verb, so parsing is reached only when it exists.
  parseAnswer(translator, body, target) {
    const answer = translator.parseEmbeddingsResponse!(body);
    return answer.model === '' ? { ...answer, model: target.model } : answer;
  },
  usageOf: (answer) => answer.usage,
};
