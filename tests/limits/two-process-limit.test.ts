/**
 * Two separate Node processes share one rate limit of N per window through a real Redis (the acceptance
 * test). Each process hammers the same keys with several concurrent loops for most of one window:
 *
 * - `strict` (one store call per request) lets exactly N through in total;
 * - `leased` (slices leased from the store, request path in memory) lets through at most N (the store never grants
 *   more) and at least N minus the under-admission bound of rate-limiter.ts, (P - 1) x (1.5 slices + one estimate);
 *   with both processes busy it is N;
 * - the same for a TPM-limited key (N = tpmLimit / estimate);
 * - `local` (no sharing) lets each process through N, so about 2N in total: the difference the store makes.
 *
 * The window is 2 s (an option of the limiter; one minute by default) so the test takes about 4 s.
 */
import { testRedisUrl } from '../services/test-redis.ts';
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { HammerPlan, HammerReport, HammerTarget } from './limit-hammer-worker.ts';

const workerPath = fileURLToPath(new URL('./limit-hammer-worker.ts', import.meta.url));

/** Forks a hammer process and resolves once it is ready for its plan. */
function startWorker(): Promise<ChildProcess> {
  const child = fork(workerPath, [], { execArgv: ['--no-warnings'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`hammer worker exited with ${code} before it was ready`)));
    child.once('message', () => resolve(child));
  });
}

function runWorker(child: ChildProcess, plan: HammerPlan): Promise<HammerReport> {
  return new Promise((resolve, reject) => {
    child.removeAllListeners('exit');
    child.once('exit', (code) => reject(new Error(`hammer worker exited with ${code} without a report`)));
    child.once('message', (message: { report?: HammerReport; error?: string }) => {
      if (message.report) resolve(message.report);
      else reject(new Error(`hammer worker failed: ${message.error}`));
    });
    child.send(plan);
  });
}

describe('rate limits shared by two processes through Redis', () => {
  it('admits N in total in strict and leased mode, and about 2N when each process counts alone', async () => {
    const url = testRedisUrl();
    const keyPrefix = `torii-test:${randomUUID()}:`;
    const windowMs = 2_000;
    const requestLimit = 150;
    const tokenLimit = 6_000;
    const estimate = 50;
    const targets: HammerTarget[] = [
      {
        name: 'strict',
        mode: 'strict',
        keyId: 'key_strict',
        rpmLimit: requestLimit,
        tpmLimit: null,
        estimatedTokens: 1,
      },
      {
        name: 'leased',
        mode: 'leased',
        keyId: 'key_leased',
        rpmLimit: requestLimit,
        tpmLimit: null,
        estimatedTokens: 1,
      },
      {
        name: 'leased-tokens',
        mode: 'leased',
        keyId: 'key_leased_tokens',
        rpmLimit: null,
        tpmLimit: tokenLimit,
        estimatedTokens: estimate,
      },
      {
        name: 'strict-tokens',
        mode: 'strict',
        keyId: 'key_strict_tokens',
        rpmLimit: null,
        tpmLimit: tokenLimit,
        estimatedTokens: estimate,
      },
      { name: 'local', mode: 'local', keyId: 'key_local', rpmLimit: requestLimit, tpmLimit: null, estimatedTokens: 1 },
    ];
    const workers = await Promise.all([startWorker(), startWorker()]);
    try {
      // Start 50 ms into the next window that is at least 300 ms away, and stop 300 ms before it ends.
      const now = Date.now();
      let windowStart = Math.ceil(now / windowMs) * windowMs;
      if (windowStart - now < 300) windowStart += windowMs;
      const plan: HammerPlan = {
        redisUrl: url,
        keyPrefix,
        windowMs,
        startAt: windowStart + 50,
        stopAt: windowStart + windowMs - 300,
        clients: 6,
        targets,
      };
      const reports = await Promise.all(workers.map((worker) => runWorker(worker, plan)));
      const total = (name: string) => reports.reduce((sum, report) => sum + (report.admitted[name] ?? 0), 0);

      expect(reports.map((report) => report.storeErrors)).toEqual([0, 0]);
      // Both processes were busy and were refused in the end (demand exceeded the limit in every mode).
      for (const report of reports)
        for (const target of targets) expect(report.refused[target.name]).toBeGreaterThan(0);

      expect(total('strict')).toBe(requestLimit);
      expect(total('strict-tokens')).toBe(tokenLimit / estimate);

      // Leased: never over; under by at most (P - 1) x (1.5 slices + one estimate), first slice = 10% of the limit.
      const requestBound = Math.ceil(1.5 * Math.ceil(0.1 * requestLimit)) + 1;
      expect(total('leased')).toBeLessThanOrEqual(requestLimit);
      expect(total('leased')).toBeGreaterThanOrEqual(requestLimit - requestBound);
      const tokenBound = Math.ceil((1.5 * Math.ceil(0.1 * tokenLimit) + estimate) / estimate);
      expect(total('leased-tokens')).toBeLessThanOrEqual(tokenLimit / estimate);
      expect(total('leased-tokens')).toBeGreaterThanOrEqual(tokenLimit / estimate - tokenBound);
      // ... and most leased reservations were answered without waiting for the store.
      for (const report of reports) {
        expect(report.synchronous.leased).toBeGreaterThan(0.5 * (report.admitted.leased ?? 0));
        expect(report.synchronous.strict).toBe(0);
      }

      // Local: each process admits the whole limit on its own.
      for (const report of reports) expect(report.admitted.local).toBe(requestLimit);
      expect(total('local')).toBe(2 * requestLimit);

      // The store agrees with what was admitted.
      const redis = new Redis(url);
      try {
        const counter = async (name: string) =>
          Number(await redis.get(`${keyPrefix}${name}:${windowStart}:${windowMs}`));
        expect(await counter('rpm:key_strict')).toBe(requestLimit);
        expect(await counter('tpm:key_strict_tokens')).toBe(tokenLimit);
        expect(await counter('rpm:key_leased')).toBeLessThanOrEqual(requestLimit);
        expect(await counter('rpm:key_local')).toBe(0);
      } finally {
        await redis.quit();
      }
      console.log(
        `admitted of N=${requestLimit} (tokens: N=${tokenLimit / estimate}): ` +
          targets
            .map((target) => `${target.name} ${reports.map((report) => report.admitted[target.name]).join('+')}`)
            .join(', '),
      );
    } finally {
      for (const worker of workers) worker.kill();
    }
  }, 15_000);
});
