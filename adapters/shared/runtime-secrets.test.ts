import { describe, expect, it } from 'vitest';
import { runtimeSecrets } from './runtime-secrets.ts';

describe('runtimeSecrets', () => {
  it('takes the master key, database and Redis passwords and the Upstash token', () => {
    const secrets = runtimeSecrets(
      {
        DATABASE_URL: 'postgres://torii:db-password-1@db:5432/torii',
        REDIS_URL: 'redis://:redis-password-2@cache:6379',
        UPSTASH_REDIS_REST_TOKEN: 'upstash-token-3',
        PORT: '8787',
      },
      'sk-master-0',
    );
    for (const secret of ['sk-master-0', 'db-password-1', 'redis-password-2', 'upstash-token-3'])
      expect(secrets).toContain(secret);
    expect(secrets).not.toContain('8787');
  });
});
