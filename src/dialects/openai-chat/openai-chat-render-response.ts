import type { CanonicalChatResponse, CanonicalFinishReason } from '../../canonical/canonical-chat-response.ts';
import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';

/** OpenAI's finish_reason for a canonical finish reason. */
export function openAIFinishReason(reason: CanonicalFinishReason): string {
  switch (reason.unified) {
    case 'length':
      return 'length';
    case 'tool-calls':
      return 'tool_calls';
    case 'content-filter':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** OpenAI's usage object for canonical usage, with cached and reasoning token details. */
export function openAIUsage(usage: CanonicalUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.totalTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
  };
}

/** Renders a canonical response as an OpenAI `chat.completion` object. */
export function renderOpenAIChatResponse(response: CanonicalChatResponse): Record<string, unknown> {
  return {
    id: response.id,
    object: 'chat.completion',
    created: response.created,
    model: response.model,
    choices: response.choices.map((choice) => ({
      index: choice.index,
      message: {
        role: 'assistant',
        content: choice.text,
        refusal: choice.refusal ?? null,
        ...(choice.reasoning !== undefined ? { reasoning_content: choice.reasoning } : {}),
        ...(choice.toolCalls.length > 0
          ? {
              tool_calls: choice.toolCalls.map((call) => ({
                id: call.id,
                type: 'function',
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      },
      logprobs: choice.logprobs ?? null,
      finish_reason: openAIFinishReason(choice.finishReason),
    })),
    ...(response.usage !== undefined ? { usage: openAIUsage(response.usage) } : {}),
    system_fingerprint: response.systemFingerprint ?? null,
  };
}
