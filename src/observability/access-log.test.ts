import { describe, expect, it } from 'vitest';
import { accessLine, createAccessLog } from './access-log.ts';
import { exampleObservation } from '../../tests/support/request-observation-example.ts';

const observation = exampleObservation;

describe('the access line', () => {
  it('carries the request in one flat JSON object, times to the microsecond', () => {
    expect(JSON.parse(accessLine(observation, Date.UTC(2025, 0, 1, 0, 0, 1)))).toEqual({
      time: '2025-01-01T00:00:01.000Z',
      level: 'info',
      message: 'request',
      requestId: 'a1b2',
      keyId: 'key_1',
      keyPrefix: 'sk-torii-AbC123',
      clientApi: 'anthropic-messages',
      operation: 'chat',
      stream: true,
      modelGroup: 'claude',
      provider: 'anthropic',
      deployment: 'claude/0',
      upstreamModel: 'claude-sonnet-4',
      attempts: 1,
      status: 200,
      latencyMs: 812.346,
      upstreamMs: 800.1,
      overheadMs: 12.246,
      timeToFirstTokenMs: 301.5,
      inputTokens: 1200,
      outputTokens: 80,
      cachedInputTokens: 1000,
      reasoningTokens: 0,
      usageSource: 'provider',
      costUsd: 0.00186,
    });
  });

  it('names the group that served a fallback beside the one asked for', () => {
    const line = JSON.parse(accessLine({ ...observation, servedModelGroup: 'claude-backup' }, 0)) as object;
    expect(line).toMatchObject({ modelGroup: 'claude', servedModelGroup: 'claude-backup' });
  });

  it('is the JSON of its fields whatever the strings and numbers hold (as JSON.stringify writes them)', () => {
    const strings = [
      'plain-id_1',
      'a "quoted" name',
      'back\\slash',
      'tab\there',
      'line\u2028sep',
      'é 漢字 🙂',
      '',
      '\u0000',
    ];
    const numbers = [0, -0, 1.5, 1e21, 1e-7, Number.NaN, Number.POSITIVE_INFINITY, -3];
    for (let index = 0; index < strings.length; index++) {
      const text = strings[index] as string;
      const number = numbers[index] as number;
      const varied = {
        ...observation,
        requestId: text,
        clientRequestId: text,
        keyId: text,
        keyPrefix: text,
        modelGroup: text,
        servedModelGroup: `${text}-backup`,
        deployment: text,
        upstreamModel: text,
        durationMs: number,
        upstreamMs: number,
        inputTokens: number,
        costUsd: number,
      };
      const rounded = (value: number) => Math.round(value * 1000) / 1000;
      const expected = JSON.parse(
        JSON.stringify({
          time: '1970-01-01T00:00:00.000Z',
          level: 'info',
          message: 'request',
          requestId: text,
          clientRequestId: text,
          keyId: text,
          keyPrefix: text,
          clientApi: observation.clientApi,
          operation: observation.operation,
          stream: observation.stream,
          modelGroup: text,
          servedModelGroup: `${text}-backup`,
          provider: observation.provider,
          deployment: text,
          upstreamModel: text,
          attempts: observation.attempts,
          status: observation.status,
          latencyMs: rounded(number),
          upstreamMs: rounded(number),
          overheadMs: observation.overheadMs === undefined ? undefined : rounded(observation.overheadMs),
          timeToFirstTokenMs:
            observation.timeToFirstTokenMs === undefined ? undefined : rounded(observation.timeToFirstTokenMs),
          inputTokens: number,
          outputTokens: observation.outputTokens,
          cachedInputTokens: observation.cachedInputTokens,
          reasoningTokens: observation.reasoningTokens,
          usageSource: observation.usageSource,
          costUsd: number,
        }),
      ) as unknown;
      expect(JSON.parse(accessLine(varied, 0))).toEqual(expected);
    }
  });

  it('is written at info and above only', () => {
    const lines: string[] = [];
    createAccessLog({ level: 'debug', write: (line) => lines.push(line) })?.(observation);
    createAccessLog({ level: 'info', write: (line) => lines.push(line) })?.(observation);
    expect(lines).toHaveLength(2);
    expect(createAccessLog({ level: 'warn' })).toBeUndefined();
    expect(createAccessLog({ level: 'silent' })).toBeUndefined();
  });
});
