import { describe, expect, it } from 'vitest';
import {
  describePhase,
  measurementPlan,
  plannedSeconds,
  processOf,
  readSettings,
  roundOrder,
  scenarioOf,
  warmUpPlan,
} from './bench-plan.ts';

describe('readSettings', () => {
  it('scales every duration (each at least 1 s) and keeps rates and connections', () => {
    const full = readSettings({});
    expect(full).toMatchObject({
      rateSeconds: 10,
      maxSeconds: 2,
      maxRounds: 5,
      rounds: 3,
      rate: 1_000,
      rateConnections: 20,
    });
    expect(full.firstByteRequests).toBe(2_000);
    const short = readSettings({ BENCH_DURATION_SCALE: '0.2', BENCH_RATE: '500' });
    expect(short).toMatchObject({ rateSeconds: 2, maxSeconds: 1, concurrencyOneSeconds: 1, rate: 500 });
    expect(readSettings({ BENCH_BUDGET_SECONDS: '99' }).budgetSeconds).toBe(99);
  });
});

describe('measurementPlan', () => {
  it('measures both scenarios at max (5 rounds), the fixed rate and c=1 (3 rounds), first byte on chat-stream', () => {
    const plan = measurementPlan(readSettings({}));
    expect(plan.map(describePhase)).toEqual([
      'chat max c32 2s',
      'chat rate c20 1000 rps 10s',
      'chat c1 c1 2s',
      'chat first byte 2000 requests (at most 3 s) beside production-master',
      'chat-stream max c32 2s',
      'chat-stream rate c20 1000 rps 10s',
      'chat-stream c1 c1 2s',
      'chat-stream first byte 2000 requests (at most 3 s)',
      'chat hey c20 1000 rps 10s',
      'chat info c10 2s',
      'chat info c100 2s',
      'messages info c32 2s',
      'responses info c32 2s',
    ]);
    const [max, rate, c1, keyPair] = plan;
    // The virtual key's own cost: production's chat, step by step beside production-master.
    expect(keyPair).toMatchObject({ kind: 'first-byte', targets: ['production'], base: 'production-master' });
    // lean-ten (chat-ten on the lean process) runs right next to lean, in both orders; only at chat's max.
    expect(max!.targets).toEqual(['floor', 'production', 'embedded', 'lean', 'lean-ten']);
    expect(roundOrder(max!, 1).slice(0, 2)).toEqual(['lean-ten', 'lean']);
    expect(plan.filter((phase) => phase.targets.includes('lean-ten'))).toEqual([max]);
    expect(scenarioOf('lean-ten', 'chat')).toBe('chat-ten');
    expect(scenarioOf('lean', 'chat')).toBe('chat');
    expect(max!.once).toEqual(['mock']);
    expect(max!.rounds).toBe(5);
    expect(rate!.rounds).toBe(3);
    // Chat's fixed rate (the p99 checks) adds up to three rounds while too few were quiet; chat-stream's does not.
    expect(rate!.extraRounds).toBe(3);
    expect(plan.filter((phase) => phase.extraRounds !== undefined)).toEqual([rate]);
    // Production runs right next to the floor, embedded right next to production, in both orders.
    expect(rate!.targets).toEqual(['floor', 'production', 'embedded', 'lean']);
    expect(roundOrder(rate!, 1)).toEqual(['lean', 'embedded', 'production', 'floor']);
    expect(rate!.seconds).toBeGreaterThanOrEqual(10);
    // production-master runs right next to production, in both orders.
    expect(c1!.targets).toEqual(['floor', 'production', 'production-master', 'embedded', 'lean']);
    expect(roundOrder(c1!, 1)).toEqual(['lean', 'embedded', 'production-master', 'production', 'floor']);
    expect(roundOrder(c1!, 2)).toEqual(c1!.targets);
    expect(plan.find((phase) => phase.kind === 'hey')!.targets).toEqual(['floor', 'production', 'lean']);
    expect(plan.filter((phase) => phase.informational).every((phase) => phase.targets.join() === 'floor,lean')).toBe(
      true,
    );
  });

  it('leaves out the shapes that did not start, and the informational rows without lean', () => {
    const plan = measurementPlan(readSettings({}), ['embedded']);
    expect(plan[0]!.targets).toEqual(['floor', 'embedded']);
    expect(plan.some((phase) => phase.targets.includes('production-master'))).toBe(false);
    expect(plan.some((phase) => phase.informational)).toBe(false);
    expect(warmUpPlan(readSettings({}), ['embedded']).map((each) => each.target)).toEqual([
      'mock',
      'floor',
      'floor',
      'embedded',
      'embedded',
    ]);
  });

  it('plans a full run under 11 minutes, under 13 with every extra round', () => {
    const settings = readSettings({});
    const planned = plannedSeconds(settings, measurementPlan(settings));
    const withoutExtras = plannedSeconds(
      settings,
      measurementPlan(settings).map(({ extraRounds: _extraRounds, ...phase }) => phase),
    );
    expect(withoutExtras).toBeGreaterThan(400);
    expect(withoutExtras).toBeLessThan(660);
    expect(planned).toBeLessThan(780);
    expect(settings.budgetSeconds).toBeGreaterThanOrEqual(planned);
    expect(processOf('production-master')).toBe('production');
  });
});
