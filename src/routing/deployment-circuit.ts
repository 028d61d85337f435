import type { CooldownPolicy } from './routing-policy.ts';

/** Where a deployment's circuit stands: serving, cooling down, or letting probes through after a cooldown. */
export type CircuitState = 'closed' | 'open' | 'half-open';

/** What a finished attempt tells the breaker. */
export type AttemptVerdict =
  /** The deployment answered. */
  | { kind: 'success' }
  /** The deployment failed in a way that counts toward opening the circuit (5xx, timeout, reset, broken answer). */
  | { kind: 'failure' }
  /** The deployment cannot serve anything for now: open the circuit at once, for `forMs` when given (a 429's wait). */
  | { kind: 'open'; forMs?: number | undefined }
  /** Says nothing about the deployment (the client left, the client's own mistake). */
  | { kind: 'neutral' };

/** A permit to send one request: whether it is one of a half-open circuit's probes. */
export type CircuitPermit = 'normal' | 'probe';

const bucketCount = 10;

/**
 * The circuit breaker of one deployment, in memory, driven by a monotonic clock. Closed, it counts successes and
 * failures over a sliding window (ten buckets); it opens when the failures reach `failures`, or their share reaches
 * `failureRatio` of at least `minimumRequests`, or at once on a verdict of `open`. Open, it refuses permits until the
 * cooldown is over, then lets `probes` requests through at a time (half-open): a probe's success closes it, a probe's
 * failure opens it again for twice the last cooldown (up to `maxCooldownMs`).
 *
 * @example
 * const circuit = new DeploymentCircuit(defaultCooldownPolicy);
 * const permit = circuit.acquire(now());
 * if (permit !== undefined) circuit.release(now(), permit, { kind: 'failure' });
 */
export class DeploymentCircuit {
  readonly policy: CooldownPolicy;
  /** Monotonic ms until which the circuit is open; 0 while it is closed. Past it, the circuit is half-open. */
  openUntil = 0;
  /** The cooldown the next opening lasts (doubled by failed probes, reset when the circuit closes). */
  nextCooldownMs: number;
  /** Times the circuit opened since the process started. */
  openings = 0;
  private probesInFlight = 0;
  private readonly bucketMs: number;
  private readonly bucketIndex = new Float64Array(bucketCount).fill(-1);
  private readonly bucketSuccesses = new Uint32Array(bucketCount);
  private readonly bucketFailures = new Uint32Array(bucketCount);

  constructor(policy: CooldownPolicy) {
    this.policy = policy;
    this.nextCooldownMs = policy.cooldownMs;
    this.bucketMs = Math.max(1, policy.windowMs / bucketCount);
  }

  /** The state at `now`: an open circuit whose cooldown is over is half-open. */
  state(now: number): CircuitState {
    if (this.openUntil === 0) return 'closed';
    return now < this.openUntil ? 'open' : 'half-open';
  }

  /** Whether a permit could be had at `now`, without taking one. */
  available(now: number): boolean {
    const state = this.state(now);
    if (state === 'closed') return true;
    return state === 'half-open' && this.probesInFlight < this.policy.probes;
  }

  /** A permit to send one request now, or undefined while the circuit is open or its probes are all out. */
  acquire(now: number): CircuitPermit | undefined {
    const state = this.state(now);
    if (state === 'closed') return 'normal';
    if (state === 'open' || this.probesInFlight >= this.policy.probes) return undefined;
    this.probesInFlight++;
    return 'probe';
  }

  /** Returns a permit with what its attempt showed; true when this verdict opened the circuit. */
  release(now: number, permit: CircuitPermit, verdict: AttemptVerdict): boolean {
    if (permit === 'probe') this.probesInFlight = Math.max(0, this.probesInFlight - 1);
    if (verdict.kind === 'neutral') return false;
    const state = this.state(now);
    if (permit === 'probe' && state === 'half-open') {
      if (verdict.kind === 'success') this.close();
      else this.open(now, verdict.kind === 'open' ? verdict.forMs : undefined, true);
      return verdict.kind !== 'success';
    }
    const bucket = this.bucket(now);
    if (verdict.kind === 'success') {
      this.bucketSuccesses[bucket]!++;
      return false;
    }
    this.bucketFailures[bucket]!++;
    if (state !== 'closed' || (verdict.kind !== 'open' && !this.tripped(now))) return false;
    this.open(now, verdict.kind === 'open' ? verdict.forMs : undefined, false);
    return true;
  }

  /**
   * Opens the circuit until `now + forMs` because another process saw the deployment fail (shared routing state); a
   * longer opening already in place is kept.
   */
  openFromElsewhere(now: number, forMs: number): void {
    if (now + forMs <= this.openUntil) return;
    this.openUntil = now + forMs;
    this.probesInFlight = 0;
  }

  /** Closes the circuit because another process saw the deployment recover. */
  closeFromElsewhere(): void {
    if (this.openUntil !== 0) this.close();
  }

  /** Failures and requests counted in the window ending at `now`. */
  windowCounts(now: number): { failures: number; requests: number } {
    const current = Math.floor(now / this.bucketMs);
    let failures = 0;
    let requests = 0;
    for (let index = 0; index < bucketCount; index++) {
      if (current - this.bucketIndex[index]! >= bucketCount) continue;
      failures += this.bucketFailures[index]!;
      requests += this.bucketFailures[index]! + this.bucketSuccesses[index]!;
    }
    return { failures, requests };
  }

  private tripped(now: number): boolean {
    const { failures, requests } = this.windowCounts(now);
    if (failures >= this.policy.failures) return true;
    return requests >= this.policy.minimumRequests && failures / requests >= this.policy.failureRatio;
  }

  private open(now: number, forMs: number | undefined, afterProbe: boolean): void {
    if (afterProbe) this.nextCooldownMs = Math.min(this.nextCooldownMs * 2, this.policy.maxCooldownMs);
    const cooldown =
      forMs === undefined ? this.nextCooldownMs : Math.min(Math.max(forMs, 1), this.policy.maxCooldownMs);
    this.openUntil = now + cooldown;
    this.probesInFlight = 0;
    this.openings++;
    this.clearWindow();
  }

  private close(): void {
    this.openUntil = 0;
    this.probesInFlight = 0;
    this.nextCooldownMs = this.policy.cooldownMs;
    this.clearWindow();
  }

  private clearWindow(): void {
    this.bucketIndex.fill(-1);
    this.bucketSuccesses.fill(0);
    this.bucketFailures.fill(0);
  }

  private bucket(now: number): number {
    const current = Math.floor(now / this.bucketMs);
    const index = current % bucketCount;
    if (this.bucketIndex[index] !== current) {
      this.bucketIndex[index] = current;
      this.bucketSuccesses[index] = 0;
      this.bucketFailures[index] = 0;
    }
    return index;
  }
}
