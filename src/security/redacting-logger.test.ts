import { describe, expect, it } from 'vitest';
import type { GatewayLogger } from '../services.ts';
import { createRedactingLogger } from './redacting-logger.ts';
import { createSecretRedactor } from './secret-redactor.ts';

describe('createRedactingLogger', () => {
  it('redacts messages, string fields, errors and nested objects before the underlying logger sees them', () => {
    const lines: unknown[] = [];
    const sink: GatewayLogger = {
      info: (message, fields) => lines.push(['info', message, fields]),
      warn: (message, fields) => lines.push(['warn', message, fields]),
      error: (message, fields) => lines.push(['error', message, fields]),
    };
    const logger = createRedactingLogger(sink, createSecretRedactor(['sk-provider-secret']));
    logger.error('upstream said sk-provider-secret', {
      error: new Error('connect to https://x/?key=sk-provider-secret failed'),
      body: { nested: ['sk-provider-secret'] },
      count: 3,
    });
    logger.info('clean', { requestId: 'r1' });
    expect(JSON.stringify(lines)).not.toContain('sk-provider-secret');
    expect(lines).toEqual([
      [
        'error',
        'upstream said [redacted]',
        {
          error: 'Error: connect to https://x/?key=[redacted] failed',
          body: { nested: ['[redacted]'] },
          count: 3,
        },
      ],
      ['info', 'clean', { requestId: 'r1' }],
    ]);
  });
});
