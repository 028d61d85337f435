import { describe, expect, it } from 'vitest';
import type { ProviderTranslator } from '../canonical/provider-translator.ts';
import { defaultUpstreamLimits } from '../upstream/upstream-limits.ts';
import { pickDeployment } from './pick-deployment.ts';
import type { ResolvedDeployment, ResolvedModelGroup } from './resolved-deployment.ts';

/** pickDeployment reads only ids and weights; the translator is never touched. */
const translator = {} as ProviderTranslator;

function group(weights: number[]): ResolvedModelGroup {
  const deployments = weights.map((weight, index): ResolvedDeployment => ({
    id: `group/${index}`,
    translator,
    weight,
    price: undefined,
    limits: defaultUpstreamLimits,
    nativeDialects: new Set(['openai-chat' as const]),
    target: { providerName: 'openai', baseURL: 'https://x', model: 'm', apiKey: 'k', headers: {}, options: {} },
  }));
  return { name: 'group', deployments, totalWeight: weights.reduce((sum, weight) => sum + weight, 0) };
}

describe('pickDeployment', () => {
  it('returns the only deployment without drawing a random number', () => {
    let draws = 0;
    const picked = pickDeployment(group([5]), () => {
      draws++;
      return 0.5;
    });
    expect(picked.id).toBe('group/0');
    expect(draws).toBe(0);
  });

  it('splits [0, 1) in proportion to the weights', () => {
    const weighted = group([1, 3]);
    const pick = (value: number) => pickDeployment(weighted, () => value).id;
    expect(pick(0)).toBe('group/0');
    expect(pick(0.2499)).toBe('group/0');
    expect(pick(0.25)).toBe('group/1');
    expect(pick(0.9999)).toBe('group/1');
  });

  it('follows the weights over many evenly spread draws', () => {
    const weighted = group([1, 2, 1]);
    const counts = new Map<string, number>();
    for (let step = 0; step < 400; step++) {
      const id = pickDeployment(weighted, () => step / 400).id;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    expect(Object.fromEntries(counts)).toEqual({ 'group/0': 100, 'group/1': 200, 'group/2': 100 });
  });

  it('falls back to the last deployment when random returns 1', () => {
    expect(pickDeployment(group([1, 1, 1]), () => 1).id).toBe('group/2');
  });

  it('uses fractional weights', () => {
    const weighted = group([0.5, 0.25]);
    expect(pickDeployment(weighted, () => 0.66).id).toBe('group/0');
    expect(pickDeployment(weighted, () => 0.67).id).toBe('group/1');
  });
});
