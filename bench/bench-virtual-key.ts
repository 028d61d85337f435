import { httpExchange } from './bench-process.ts';
import { scenarioRequestBody } from './bench-scenarios.ts';

/**
 * Creates the bench's virtual key through the admin API (with the master key): RPM, TPM and budget limits the run
 * never reaches, so every request takes the limit and budget paths without being refused. Then checks that a chat
 * request with it answers 200. Returns the key's id and secret.
 *
 * @example
 * const { id, key } = await createVirtualKey(toriiPort, `Bearer ${masterKey}`);
 */
export async function createVirtualKey(
  port: number,
  masterAuthorization: string,
): Promise<{ id: string; key: string }> {
  const created = await httpExchange({
    port,
    method: 'POST',
    path: '/admin/keys',
    headers: { authorization: masterAuthorization },
    body: JSON.stringify({
      name: 'bench',
      rpm_limit: 100_000_000,
      tpm_limit: 1_000_000_000,
      budget: { amount_usd: 1_000_000, period: 'month' },
    }),
  });
  if (created.status !== 201) {
    throw new Error(`POST /admin/keys answered ${created.status}: ${created.body.slice(0, 300)}`);
  }
  const { id, key } = JSON.parse(created.body) as { id?: unknown; key?: unknown };
  if (typeof id !== 'string' || typeof key !== 'string') {
    throw new Error(`POST /admin/keys answered without id and key: ${created.body.slice(0, 300)}`);
  }
  const chat = await httpExchange({
    port,
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { authorization: `Bearer ${key}` },
    body: scenarioRequestBody('chat'),
  });
  if (chat.status !== 200) throw new Error(`a chat request with the new key answered ${chat.status}: ${chat.body}`);
  return { id, key };
}
