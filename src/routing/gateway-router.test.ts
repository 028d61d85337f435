import { describe, expect, it } from 'vitest';
// eslint-disable-next-line no-restricted-imports -- resolved against the shipped registry, as the gateway does
import { builtinProviders } from '../../providers/index.ts';
import { parseGatewayConfig } from '../config/config-parse.ts';
import { noMetrics, type CircuitObservation, type GatewayLogger } from '../services.ts';
import type { CircuitBus, SharedCircuitChange } from './circuit-bus.ts';
import { createGatewayRouter } from './gateway-router.ts';
import { resolveModelGroups } from './resolve-model-groups.ts';

/** A bus joining the routers of one test, delivering every change to every subscriber (the sender included). */
function memoryBus(): CircuitBus & { sent: SharedCircuitChange[] } {
  const listeners = new Set<(change: SharedCircuitChange) => void>();
  const sent: SharedCircuitChange[] = [];
  return {
    sent,
    publish(change) {
      sent.push(change);
      for (const listener of listeners) listener(change);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** Group `g` with one deployment, `g/0`, under the given breaker settings. */
function oneDeploymentGroup(cooldown?: Record<string, number>) {
  const group = {
    deployments: [{ provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model: 'a' }],
    ...(cooldown === undefined ? {} : { cooldown }),
  };
  return resolveModelGroups(parseGatewayConfig({ modelGroups: { g: group } }), builtinProviders);
}

const quiet: GatewayLogger = { info() {}, warn() {}, error() {} };

describe('createGatewayRouter', () => {
  it("shares a circuit's opening (for the time left of it) and its closing with the other processes", () => {
    const groups = oneDeploymentGroup({ failures: 1, cooldownMs: 10_000 });
    const group = groups.get('g')!;
    const bus = memoryBus();
    const clocks = { one: 0, two: 5_000, wall: 1_000_000 };
    const services = (name: 'one' | 'two') => ({ now: () => clocks[name], metrics: noMetrics, logger: quiet });
    const one = createGatewayRouter(groups, services('one'), bus, () => clocks.wall);
    const two = createGatewayRouter(groups, services('two'), bus, () => clocks.wall);

    const choice = one.choose(group, 'chat', new Set())!;
    clocks.wall += 2_000;
    one.finish(choice, { verdict: { kind: 'failure' } });
    expect(bus.sent).toEqual([
      { origin: expect.any(String), deploymentId: 'g/0', state: 'open', openUntil: 1_012_000 },
    ]);
    // The other process opens it until the same wall-clock time, whatever its own monotonic clock reads.
    expect(two.choose(group, 'chat', new Set())).toBeUndefined();
    expect(two.runtime('g/0')!.circuit.openUntil).toBe(15_000);
    // Its own echo changes nothing in the sender.
    expect(one.runtime('g/0')!.circuit.openUntil).toBe(10_000);

    clocks.one = 10_000;
    const probe = one.choose(group, 'chat', new Set())!;
    one.finish(probe, { verdict: { kind: 'success' } });
    expect(bus.sent.at(-1)).toMatchObject({ deploymentId: 'g/0', state: 'closed' });
    expect(two.choose(group, 'chat', new Set())).toMatchObject({ permit: 'normal' });
  });

  it('ignores an opening that is already over when it arrives', () => {
    const groups = oneDeploymentGroup();
    const bus = memoryBus();
    const router = createGatewayRouter(groups, { now: () => 0, metrics: noMetrics, logger: quiet }, bus, () => 5_000);
    bus.publish({ origin: 'elsewhere', deploymentId: 'g/0', state: 'open', openUntil: 4_000 });
    bus.publish({ origin: 'elsewhere', deploymentId: 'unknown/7', state: 'open', openUntil: 9_000 });
    expect(router.runtime('g/0')!.circuit.state(0)).toBe('closed');
  });

  it("tells the metrics about its own changes as local and the other processes' as shared", () => {
    const groups = oneDeploymentGroup({ failures: 1 });
    const bus = memoryBus();
    const seen: CircuitObservation[] = [];
    const metrics = { ...noMetrics, circuitChanged: (observation: CircuitObservation) => seen.push(observation) };
    const one = createGatewayRouter(groups, { now: () => 0, metrics, logger: quiet }, bus);
    createGatewayRouter(groups, { now: () => 0, metrics, logger: quiet }, bus);
    one.finish(one.choose(groups.get('g')!, 'chat', new Set())!, { verdict: { kind: 'failure' } });
    expect(seen).toEqual([
      { deployment: 'g/0', state: 'open', source: 'local' },
      { deployment: 'g/0', state: 'open', source: 'shared' },
    ]);
  });
});
