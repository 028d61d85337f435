import { describe, expect, it } from 'vitest';
// eslint-disable-next-line no-restricted-imports -- resolved against the shipped registry, as the gateway does
import { builtinProviders } from '../../providers/index.ts';
import { parseGatewayConfig } from '../config/config-parse.ts';
import { createDeploymentRouter, type CircuitChange } from './deployment-router.ts';
import { resolveModelGroups } from './resolve-model-groups.ts';
import { seededRandom } from '../../tests/support/seeded-random.ts';

function deployment(model: string, extra: Record<string, unknown> = {}) {
  return { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model, ...extra };
}

function setup(group: Record<string, unknown>, extraGroups: Record<string, unknown> = {}) {
  const groups = resolveModelGroups(parseGatewayConfig({ modelGroups: { group, ...extraGroups } }), builtinProviders);
  const clock = { now: 0 };
  const changes: CircuitChange[] = [];
  const router = createDeploymentRouter(groups, {
    now: () => clock.now,
    wallNow: () => 1_000_000 + clock.now,
    random: seededRandom(7),
    onCircuitChange: (change) => changes.push(change),
  });
  return { group: groups.get('group')!, groups, router, clock, changes };
}

function picks(setupResult: ReturnType<typeof setup>, count: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (let index = 0; index < count; index++) {
    const choice = setupResult.router.choose(setupResult.group, 'chat', new Set())!;
    counts[choice.runtime.deployment.target.model] = (counts[choice.runtime.deployment.target.model] ?? 0) + 1;
    setupResult.router.finish(choice, { verdict: { kind: 'success' }, latencyMs: 1 });
  }
  return counts;
}

describe('createDeploymentRouter', () => {
  it('weighted: picks by weight', () => {
    const counts = picks(setup({ deployments: [deployment('a', { weight: 3 }), deployment('b')] }), 4000);
    expect(counts.a! / 4000).toBeGreaterThan(0.7);
    expect(counts.a! / 4000).toBeLessThan(0.8);
  });

  it('skips a deployment whose circuit is open, tells other processes, and probes it after the cooldown', () => {
    const state = setup({
      deployments: [deployment('a'), deployment('b')],
      cooldown: { failures: 2, cooldownMs: 1000 },
    });
    const { router, group, clock, changes } = state;
    for (let failed = 0; failed < 2;) {
      const choice = router.choose(group, 'chat', new Set())!;
      const isA = choice.runtime.deployment.target.model === 'a';
      router.finish(choice, { verdict: isA ? { kind: 'failure' } : { kind: 'success' } });
      if (isA) failed++;
    }
    expect(changes).toEqual([{ deploymentId: 'group/0', state: 'open', forMs: 1000 }]);
    expect(picks(state, 200)).toEqual({ b: 200 });
    clock.now = 1000;
    const seen: string[] = [];
    // The first pick of a after the cooldown is its probe; while it is out, a is not picked again.
    const held = [];
    for (let index = 0; index < 50; index++) {
      const choice = router.choose(group, 'chat', new Set())!;
      seen.push(choice.runtime.deployment.target.model);
      held.push(choice);
    }
    expect(seen.filter((model) => model === 'a')).toHaveLength(1);
    for (const choice of held) router.finish(choice, { verdict: { kind: 'success' } });
    expect(changes.at(-1)).toEqual({ deploymentId: 'group/0', state: 'closed' });
    expect(router.statuses().map((status) => status.state)).toEqual(['closed', 'closed']);
  });

  it('prefers deployments the request has not tried; a tried one again only when none is left', () => {
    const { router, group } = setup({ deployments: [deployment('a'), deployment('b')] });
    const first = router.choose(group, 'chat', new Set(['group/0']))!;
    expect(first).toMatchObject({ repeat: false, runtime: { deployment: { id: 'group/1' } } });
    const again = router.choose(group, 'chat', new Set(['group/0', 'group/1']))!;
    expect(again.repeat).toBe(true);
  });

  it('answers undefined when every circuit is open, with the time to the first reopening', () => {
    const { router, group, clock } = setup({
      deployments: [deployment('a'), deployment('b')],
      cooldown: { failures: 1, cooldownMs: 1000 },
    });
    router.applyChange({ deploymentId: 'group/0', state: 'open', forMs: 3000 });
    router.applyChange({ deploymentId: 'group/1', state: 'open', forMs: 2000 });
    clock.now = 500;
    expect(router.choose(group, 'chat', new Set())).toBeUndefined();
    expect(router.cooledForMs(group, 'chat')).toBe(1500);
    const status = router.statuses()[1]!;
    expect(status).toMatchObject({ state: 'open', cooledUntil: 1_002_000 });
  });

  it('least-busy: the deployment with the fewest attempts in flight', () => {
    const { router, group } = setup({ strategy: 'least-busy', deployments: [deployment('a'), deployment('b')] });
    const one = router.choose(group, 'chat', new Set())!;
    const two = router.choose(group, 'chat', new Set())!;
    expect(two.runtime).not.toBe(one.runtime);
    router.finish(one, { verdict: { kind: 'success' } });
    expect(router.choose(group, 'chat', new Set())!.runtime).toBe(one.runtime);
  });

  it('latency: measures each deployment first, then takes the fastest but still explores now and then', () => {
    const state = setup({ strategy: 'latency', deployments: [deployment('fast'), deployment('slow')] });
    const { router, group } = state;
    const counts: Record<string, number> = {};
    for (let index = 0; index < 2000; index++) {
      const choice = router.choose(group, 'chat', new Set())!;
      const model = choice.runtime.deployment.target.model;
      counts[model] = (counts[model] ?? 0) + 1;
      router.finish(choice, { verdict: { kind: 'success' }, latencyMs: model === 'fast' ? 10 : 100 });
    }
    expect(counts.slow).toBeGreaterThan(10);
    expect(counts.slow).toBeLessThan(150);
  });

  it('cost: the cheapest priced deployment; priority: the lowest tier with a usable deployment', () => {
    const cheap = { pricing: { input: 0.1, output: 0.2 } };
    const dear = { pricing: { input: 5, output: 15 } };
    const cost = setup({ strategy: 'cost', deployments: [deployment('dear', dear), deployment('cheap', cheap)] });
    expect(picks(cost, 50)).toEqual({ cheap: 50 });
    const tiers = setup({
      strategy: 'priority',
      deployments: [deployment('backup', { priority: 1 }), deployment('main', { priority: 0 })],
    });
    expect(picks(tiers, 50)).toEqual({ main: 50 });
    tiers.router.applyChange({ deploymentId: 'group/1', state: 'open', forMs: 10_000 });
    expect(picks(tiers, 20)).toEqual({ backup: 20 });
  });

  it('a pinned deployment only', () => {
    const { router, group } = setup({ deployments: [deployment('a'), deployment('b')] });
    for (let index = 0; index < 20; index++) {
      const choice = router.choose(group, 'chat', new Set(), { pinnedId: 'group/1' })!;
      expect(choice.runtime.deployment.id).toBe('group/1');
      router.finish(choice, { verdict: { kind: 'neutral' } });
    }
  });

  it('health checks: a failure counts against the circuit, a success closes a cooling one at once', () => {
    const { router, group, changes } = setup({
      deployments: [deployment('a'), deployment('b')],
      cooldown: { failures: 2, cooldownMs: 60_000 },
    });
    router.reportHealthCheck('group/0', false);
    expect(router.statuses()[0]).toMatchObject({ state: 'closed', failures: 1 });
    router.reportHealthCheck('group/0', false);
    expect(router.statuses()[0]).toMatchObject({ state: 'open' });
    router.reportHealthCheck('group/0', true);
    expect(router.statuses()[0]).toMatchObject({ state: 'closed' });
    expect(changes.map((change) => change.state)).toEqual(['open', 'closed']);
    router.reportHealthCheck('group/1', true);
    expect(changes).toHaveLength(2);
    expect(router.choose(group, 'chat', new Set(['group/1']))?.runtime.deployment.id).toBe('group/0');
  });
});
