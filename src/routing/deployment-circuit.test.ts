import { describe, expect, it } from 'vitest';
import { DeploymentCircuit } from './deployment-circuit.ts';
import { resolveCooldownPolicy } from './routing-policy.ts';

const failure = { kind: 'failure' } as const;
const success = { kind: 'success' } as const;

function failTimes(circuit: DeploymentCircuit, count: number, now: number): boolean[] {
  return Array.from({ length: count }, () => circuit.release(now, circuit.acquire(now) ?? 'normal', failure));
}

describe('DeploymentCircuit', () => {
  it('opens on the Nth failure in the window, and refuses permits until the cooldown is over', () => {
    const circuit = new DeploymentCircuit(resolveCooldownPolicy({ failures: 3, cooldownMs: 1000 }));
    expect(failTimes(circuit, 3, 100)).toEqual([false, false, true]);
    expect(circuit.state(100)).toBe('open');
    expect(circuit.acquire(1099)).toBeUndefined();
    expect(circuit.state(1100)).toBe('half-open');
  });

  it('forgets failures older than the window', () => {
    const circuit = new DeploymentCircuit(
      resolveCooldownPolicy({ failures: 3, windowMs: 10_000, minimumRequests: 100 }),
    );
    failTimes(circuit, 2, 0);
    failTimes(circuit, 1, 10_500);
    expect(circuit.state(10_500)).toBe('closed');
    expect(circuit.windowCounts(10_500)).toEqual({ failures: 1, requests: 1 });
  });

  it('opens on the failure ratio once enough requests were seen', () => {
    const circuit = new DeploymentCircuit(
      resolveCooldownPolicy({ failures: 100, failureRatio: 0.5, minimumRequests: 10 }),
    );
    for (let index = 0; index < 5; index++) circuit.release(0, 'normal', success);
    expect(failTimes(circuit, 4, 0)).toEqual([false, false, false, false]);
    expect(circuit.release(0, 'normal', failure)).toBe(true);
  });

  it('opens at once on an `open` verdict, for the wait it names (capped)', () => {
    const circuit = new DeploymentCircuit(resolveCooldownPolicy({ cooldownMs: 1000, maxCooldownMs: 5000 }));
    expect(circuit.release(0, 'normal', { kind: 'open', forMs: 3000 })).toBe(true);
    expect(circuit.openUntil).toBe(3000);
    circuit.closeFromElsewhere();
    circuit.release(0, 'normal', { kind: 'open', forMs: 60_000 });
    expect(circuit.openUntil).toBe(5000);
  });

  it('lets a bounded number of probes through after the cooldown; a success closes it', () => {
    const circuit = new DeploymentCircuit(resolveCooldownPolicy({ failures: 1, cooldownMs: 1000, probes: 2 }));
    circuit.release(0, 'normal', failure);
    expect([circuit.acquire(1000), circuit.acquire(1000), circuit.acquire(1000)]).toEqual([
      'probe',
      'probe',
      undefined,
    ]);
    expect(circuit.available(1000)).toBe(false);
    circuit.release(1001, 'probe', success);
    expect(circuit.state(1001)).toBe('closed');
    expect(circuit.acquire(1001)).toBe('normal');
  });

  it('a failed probe opens it again for twice as long, up to the cap; closing resets the cooldown', () => {
    const circuit = new DeploymentCircuit(
      resolveCooldownPolicy({ failures: 1, cooldownMs: 1000, maxCooldownMs: 3000 }),
    );
    circuit.release(0, 'normal', failure);
    expect(circuit.release(1000, circuit.acquire(1000)!, failure)).toBe(true);
    expect(circuit.openUntil).toBe(3000);
    circuit.release(3000, circuit.acquire(3000)!, failure);
    expect(circuit.openUntil).toBe(6000);
    circuit.release(6000, circuit.acquire(6000)!, success);
    circuit.release(6000, 'normal', failure);
    expect(circuit.openUntil).toBe(7000);
  });

  it('a neutral verdict gives a probe back without judging', () => {
    const circuit = new DeploymentCircuit(resolveCooldownPolicy({ failures: 1, cooldownMs: 1000 }));
    circuit.release(0, 'normal', failure);
    const permit = circuit.acquire(1000);
    expect(circuit.acquire(1000)).toBeUndefined();
    circuit.release(1000, permit!, { kind: 'neutral' });
    expect(circuit.state(1000)).toBe('half-open');
    expect(circuit.acquire(1000)).toBe('probe');
  });

  it('takes openings from elsewhere, keeping a longer one in place', () => {
    const circuit = new DeploymentCircuit(resolveCooldownPolicy({}));
    circuit.openFromElsewhere(0, 5000);
    circuit.openFromElsewhere(0, 2000);
    expect(circuit.openUntil).toBe(5000);
    expect(circuit.acquire(4999)).toBeUndefined();
    circuit.closeFromElsewhere();
    expect(circuit.acquire(4999)).toBe('normal');
  });
});
