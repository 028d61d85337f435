import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import postgres from 'postgres';
import { describe, expect, inject, it } from 'vitest';

describe('test services from the global setup', () => {
  it('reach the test worker through process.env and inject', () => {
    expect(process.env.TORII_TEST_DATABASE_URL).toMatch(/^postgres(ql)?:\/\//);
    expect(process.env.TORII_TEST_REDIS_URL).toMatch(/^rediss?:\/\//);
    expect(inject('torii-test-services')).toEqual({
      databaseUrl: process.env.TORII_TEST_DATABASE_URL,
      redisUrl: process.env.TORII_TEST_REDIS_URL,
    });
  });

  it('reach child processes the tests spawn', () => {
    const seen = execFileSync(process.execPath, ['-p', 'process.env.TORII_TEST_DATABASE_URL'], { encoding: 'utf8' });
    expect(seen.trim()).toBe(process.env.TORII_TEST_DATABASE_URL);
  });

  it('are a PostgreSQL whose user may create databases', async () => {
    const client = postgres(process.env.TORII_TEST_DATABASE_URL!, { max: 1 });
    try {
      const [row] = await client`select rolcreatedb or rolsuper as allowed from pg_roles where rolname = current_user`;
      expect(row?.allowed).toBe(true);
    } finally {
      await client.end();
    }
  });

  it('are a Redis that answers PING', async () => {
    const { hostname, port } = new URL(process.env.TORII_TEST_REDIS_URL!);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port || 6379), hostname);
      socket.once('error', reject);
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (chunk) => {
        socket.destroy();
        resolve(chunk.toString('utf8'));
      });
    });
    expect(reply).toBe('+PONG\r\n');
  });
});
