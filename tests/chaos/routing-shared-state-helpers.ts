/**
 * What the routing-shared-state suites share: the groups that make each incumbent failure visible in the hostile
 * upstream's counts, and how requests reach one process or spread over several.
 */
import { Agent, fetch as undiciFetch } from 'undici';
import { newConnectionFetch } from '../e2e/accounting-harness.ts';
import type { RunningGateway } from '../e2e/gateway-process.ts';
import { chaosMasterKey } from './chaos-client.ts';
import type { HostileUpstream } from './hostile-upstream.ts';

function deployment(upstream: HostileUpstream, behaviour: string, priority: number) {
  return { provider: 'openai', model: behaviour, baseURL: `${upstream.url}/v1`, apiKey: '${HOSTILE_KEY}', priority };
}

/**
 * Groups under the `priority` strategy: the failing deployment is tier 0, so every request goes to it first for as
 * long as no process knows it is cooling down; that makes each incumbent failure visible in the upstream's counts.
 */
export function sharedStateConfig(upstream: HostileUpstream): Record<string, unknown> {
  const tiers = (failing: string, healthy: string) => [
    deployment(upstream, failing, 0),
    deployment(upstream, healthy, 1),
  ];
  return {
    routing: { strategy: 'priority', retry: { backoffMs: 10, maxBackoffMs: 50 } },
    modelGroups: {
      'keeps-failing': {
        deployments: tiers('error:500:keeps-failing', 'text:keeps-failing'),
        cooldown: { cooldownMs: 60_000 },
      },
      'shared-cooldown': {
        deployments: tiers('error:500:shared', 'text:shared'),
        cooldown: { failures: 3, cooldownMs: 60_000 },
      },
      primary: {
        deployments: [deployment(upstream, 'error:503:primary', 0)],
        retry: { retries: 0 },
        fallbacks: ['fallback'],
      },
      fallback: {
        deployments: tiers('error:502:fallback', 'text:fallback'),
        cooldown: { failures: 2, cooldownMs: 60_000 },
      },
      'cooled-mid-request': {
        deployments: tiers('error:500:mid-request', 'text:mid-request'),
        retry: { retries: 3 },
        cooldown: { failures: 1, cooldownMs: 60_000 },
      },
      recovers: { deployments: tiers('flaky:2', 'text:recovers'), cooldown: { failures: 1, cooldownMs: 500 } },
    },
  };
}

/** Each request on a new connection: a cluster spreads connections over its workers, so all four processes serve. */
const spreadFetch = newConnectionFetch();

export async function chat(gateway: RunningGateway, model: string, send: typeof fetch = spreadFetch) {
  const response = await send(`${gateway.baseURL}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${chaosMasterKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }] }),
    signal: AbortSignal.timeout(60_000),
  });
  await response.text();
  return response;
}

/** Sends `times` requests over one kept-alive connection, so one worker of the cluster serves them all. */
export async function failInOneWorker(gateway: RunningGateway, model: string, times: number): Promise<void> {
  const oneConnection = new Agent({ connections: 1 });
  const sameWorker = ((input: string, init?: RequestInit) =>
    undiciFetch(input, { ...(init as object), dispatcher: oneConnection })) as unknown as typeof fetch;
  for (let index = 0; index < times; index++) await chat(gateway, model, sameWorker);
  await oneConnection.close();
}
