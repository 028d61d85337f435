import { describe, expect, it } from 'vitest';
// eslint-disable-next-line no-restricted-imports -- resolved against the shipped registry, as the gateway does
import { builtinProviders } from '../../providers/index.ts';
import { parseGatewayConfig } from '../config/config-parse.ts';
import { GatewayError, isGatewayError } from '../errors.ts';
import { createDeploymentRouter } from '../routing/deployment-router.ts';
import { resolveModelGroups } from '../routing/resolve-model-groups.ts';
import { createRateLimiter } from '../limits/rate-limiter.ts';
import { createRequestRecord } from './request-record.ts';
import { noMetrics } from '../services.ts';
import { retryDelayMs, serveWithRetries, type AttemptServe } from './routed-attempts.ts';
import type { ModelReply } from './gateway-responses.ts';

function deployment(model: string) {
  return { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model };
}

function upstreamFailure(upstreamStatus: number, extra: Partial<ConstructorParameters<typeof GatewayError>[0]> = {}) {
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    provider: 'openai-compatible',
    message: `upstream ${upstreamStatus}`,
    upstreamStatus,
    ...extra,
  });
}

const ok: ModelReply = { status: 200, headers: {}, body: '{}' };

function gateway(config: Record<string, unknown>) {
  const modelGroups = resolveModelGroups(parseGatewayConfig(config), builtinProviders);
  const clock = { now: 0 };
  const router = createDeploymentRouter(modelGroups, { now: () => clock.now });
  const capacity = createRateLimiter({ mode: 'local' });
  const dependencies = {
    router,
    modelGroups,
    capacity,
    services: { now: () => clock.now, metrics: noMetrics },
  } as const;
  const calls: string[] = [];
  /** Serves with `behaviour(model)`: a reply, or an error thrown. */
  const run = async (group: string, behaviour: (model: string) => ModelReply | Error, operation = 'chat' as const) => {
    const record = createRequestRecord(null, 0);
    const serve: AttemptServe = async (chosen) => {
      calls.push(chosen.target.model);
      const outcome = behaviour(chosen.target.model);
      if (outcome instanceof Error) throw outcome;
      return outcome;
    };
    try {
      const reply = await serveWithRetries(
        dependencies as never,
        record,
        { group: modelGroups.get(group)!, operation, maxOutputTokens: 100 },
        new AbortController().signal,
        serve,
      );
      return { reply, record, error: undefined };
    } catch (error) {
      return { reply: undefined, record, error: isGatewayError(error) ? error : undefined };
    }
  };
  return { run, calls, clock, router };
}

const fast = { backoffMs: 0, maxBackoffMs: 0 };

describe('serveWithRetries', () => {
  it('moves a failed attempt to the other deployment at once', async () => {
    const { run, calls } = gateway({ modelGroups: { g: { deployments: [deployment('bad'), deployment('good')] } } });
    for (let index = 0; index < 20; index++) {
      const { reply, record } = await run('g', (model) => (model === 'bad' ? upstreamFailure(500) : ok));
      expect(reply).toBe(ok);
      expect(record.deployment?.target.model).toBe('good');
    }
    // The failing deployment is cooled after its 5th failure: no more than 5 of the 20 requests went to it.
    expect(calls.filter((model) => model === 'bad').length).toBeLessThanOrEqual(5);
  });

  it('never retries another 4xx; retries a single deployment up to its retries, then answers its last failure', async () => {
    const { run, calls } = gateway({
      modelGroups: { g: { deployments: [deployment('a')], retry: { retries: 3, ...fast } } },
    });
    const refused = await run('g', () => upstreamFailure(400));
    expect(calls).toEqual(['a']);
    expect(refused.error?.message).toBe('upstream 400');
    calls.length = 0;
    const failed = await run('g', () => upstreamFailure(503));
    expect(calls).toEqual(['a', 'a', 'a', 'a']);
    expect(failed.record.attempts).toBe(4);
    expect(failed.error?.message).toBe('upstream 503');
  });

  it('does not go back to a deployment whose circuit opened during the request (A, A, A, B was the bug)', async () => {
    const { run, calls } = gateway({
      modelGroups: {
        g: {
          deployments: [deployment('a'), deployment('b')],
          retry: { retries: 3, ...fast },
          cooldown: { failures: 1 },
        },
      },
    });
    const { reply } = await run('g', (model) => (model === 'a' ? upstreamFailure(500) : ok));
    expect(reply).toBe(ok);
    expect(calls.filter((model) => model === 'a').length).toBeLessThanOrEqual(1);
  });

  it('falls back to the next group once the group is exhausted; a fallback that fails is cooled too', async () => {
    const { run, calls, router } = gateway({
      modelGroups: {
        primary: { deployments: [deployment('p')], retry: { retries: 0 }, fallbacks: ['broken', 'backup'] },
        broken: { deployments: [deployment('x')], retry: { retries: 0 }, cooldown: { failures: 2 } },
        backup: { deployments: [deployment('y')] },
      },
    });
    const behaviour = (model: string) => (model === 'y' ? ok : upstreamFailure(502));
    const first = await run('primary', behaviour);
    expect(first.record).toMatchObject({ routedGroup: 'backup', attempts: 3 });
    await run('primary', behaviour);
    expect(router.statuses().find((status) => status.id === 'broken/0')?.state).toBe('open');
    calls.length = 0;
    await run('primary', behaviour);
    expect(calls).not.toContain('x');
  });

  it('sends a context-window refusal to the typed fallback, and a content-policy refusal to its own', async () => {
    const { run } = gateway({
      modelGroups: {
        small: {
          deployments: [deployment('small')],
          contextWindowFallbacks: ['large'],
          contentPolicyFallbacks: ['lenient'],
        },
        large: { deployments: [deployment('large')] },
        lenient: { deployments: [deployment('lenient')] },
      },
    });
    const tooLong = await run('small', (model) =>
      model === 'small' ? upstreamFailure(400, { code: 'context_length_exceeded' }) : ok,
    );
    expect(tooLong.record.routedGroup).toBe('large');
    const refused = await run('small', (model) =>
      model === 'small' ? upstreamFailure(400, { code: 'content_policy_violation' }) : ok,
    );
    expect(refused.record.routedGroup).toBe('lenient');
  });

  it('answers 503 no_healthy_deployment with a retry-after when every deployment is cooling down', async () => {
    const { run, router, calls } = gateway({ modelGroups: { g: { deployments: [deployment('a')] } } });
    router.applyChange({ deploymentId: 'g/0', state: 'open', forMs: 4200 });
    const { error } = await run('g', () => ok);
    expect(calls).toEqual([]);
    expect(error).toMatchObject({ status: 503, code: 'no_healthy_deployment', headers: { 'retry-after': '5' } });
  });

  it("waits for a 429's retry-after up to the cap, and moves on without waiting past it", async () => {
    const { run, calls } = gateway({
      modelGroups: { g: { deployments: [deployment('a')], retry: { retries: 2, maxRetryAfterMs: 1000 } } },
    });
    const limited = upstreamFailure(429, { headers: { 'retry-after': '30' } });
    const { error } = await run('g', () => limited);
    expect(calls).toEqual(['a']);
    expect(error).toBe(limited);
  });
});

describe('deployment capacity', () => {
  it('skips a deployment at its rpm, for every strategy, and answers 429 when all are full', async () => {
    for (const strategy of ['weighted', 'least-busy', 'latency', 'cost', 'priority']) {
      const { run, calls } = gateway({
        modelGroups: {
          g: {
            strategy,
            deployments: [
              { ...deployment('small'), rpm: 2, priority: 0, pricing: { input: 0, output: 0 } },
              { ...deployment('large'), rpm: 3, priority: 1, pricing: { input: 9, output: 9 } },
            ],
          },
        },
      });
      const served = [];
      for (let index = 0; index < 5; index++) served.push((await run('g', () => ok)).reply);
      expect(served.every((reply) => reply === ok)).toBe(true);
      expect(calls.filter((model) => model === 'small')).toHaveLength(2);
      expect(calls.filter((model) => model === 'large')).toHaveLength(3);
      const refused = await run('g', () => ok);
      expect(refused.error).toMatchObject({ status: 429, code: 'deployment_capacity_exceeded' });
      expect(calls).toHaveLength(5);
    }
  });
});

describe('retryDelayMs', () => {
  it('doubles from the base with jitter between half and all of it, capped, and never under retry-after', () => {
    const policy = { retries: 5, backoffMs: 100, maxBackoffMs: 350, maxRetryAfterMs: 5000 };
    expect(retryDelayMs(policy, 1, undefined, () => 0)).toBe(50);
    expect(retryDelayMs(policy, 2, undefined, () => 1)).toBe(200);
    expect(retryDelayMs(policy, 5, undefined, () => 1)).toBe(350);
    expect(retryDelayMs(policy, 1, 900, () => 1)).toBe(900);
  });
});
