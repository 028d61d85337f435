import { secretsOfUrl } from '../../src/security/secret-redactor.ts';

/**
 * The secrets a server process holds beyond its config, for the gateway's redactor: the master key, the credentials
 * in `DATABASE_URL` and `REDIS_URL`, and the Upstash REST token. None of them may reach a client or a log line.
 *
 * @example
 * createGateway({ ..., secrets: runtimeSecrets(process.env, masterKey) });
 */
export function runtimeSecrets(environment: Record<string, string | undefined>, masterKey: string): string[] {
  const secrets = [masterKey];
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'UPSTASH_REDIS_REST_URL']) {
    const value = environment[name];
    if (value !== undefined && value !== '') secrets.push(...secretsOfUrl(value));
  }
  const token = environment.UPSTASH_REDIS_REST_TOKEN;
  if (token !== undefined && token !== '') secrets.push(token);
  return secrets;
}
