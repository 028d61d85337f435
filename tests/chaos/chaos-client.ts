import OpenAI from 'openai';
import type { RunningGateway } from '../e2e/gateway-process.ts';

/** The master key every chaos gateway runs with. */
export const chaosMasterKey = 'sk-torii-chaos-master-key';

/** The real openai SDK pointed at a gateway, with no retries (the suite counts every attempt itself). */
export function chaosClient(gateway: RunningGateway, timeoutMs = 60_000): OpenAI {
  return new OpenAI({ baseURL: `${gateway.baseURL}/v1`, apiKey: chaosMasterKey, maxRetries: 0, timeout: timeoutMs });
}

/** What a client read from a chat stream. */
export interface CollectedStream {
  text: string;
  chunks: number;
  finishReasons: string[];
  /** The error the stream ended with, if it did. */
  error: unknown;
}

/** Reads a whole chat completion stream, keeping the error it ended with instead of throwing. */
export async function collectChatStream(
  stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>,
): Promise<CollectedStream> {
  const collected: CollectedStream = { text: '', chunks: 0, finishReasons: [], error: undefined };
  const parts: string[] = [];
  try {
    for await (const chunk of stream) {
      collected.chunks++;
      for (const choice of chunk.choices) {
        if (choice.delta.content) parts.push(choice.delta.content);
        if (choice.finish_reason) collected.finishReasons.push(choice.finish_reason);
      }
    }
  } catch (error) {
    collected.error = error;
  }
  collected.text = parts.join('');
  return collected;
}

/** `GET /health/live` answers 200 within `timeoutMs`. */
export async function isLive(gateway: RunningGateway, timeoutMs = 10_000): Promise<boolean> {
  try {
    const response = await fetch(`${gateway.baseURL}/health/live`, { signal: AbortSignal.timeout(timeoutMs) });
    return response.status === 200;
  } catch {
    return false;
  }
}
