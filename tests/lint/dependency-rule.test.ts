import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * Proves the dependency rule of design.md §2 as eslint.config.js enforces it: each case lints a one-line file at a
 * path in the layer under test (the file need not exist) and looks only at the import-restriction rules.
 */
const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const eslint = new ESLint({ cwd: repositoryRoot });
const restrictionRules = new Set(['no-restricted-imports', 'torii/no-restricted-dynamic-imports']);

async function restrictions(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  if (!result) throw new Error(`no lint result for ${filePath}`);
  const fatal = result.messages.filter((message) => message.fatal);
  expect(fatal, `${filePath} should parse and not be ignored`).toEqual([]);
  return result.messages
    .filter((message) => message.ruleId !== null && restrictionRules.has(message.ruleId))
    .map((message) => message.message);
}

// The first lint loads ESLint's config and the TypeScript parser: 4.9 s under two CPU hogs, against vitest's 5 s default.
describe('dependency rule (design.md §2)', { timeout: 60_000 }, () => {
  describe('src/ stays runtime-neutral and below providers/ and adapters/', () => {
    it.each([
      ["import { readFile } from 'node:fs/promises';", 'src/config/load-config.ts'],
      ["import { readFileSync } from 'node:fs';", 'src/gateway.ts'],
      ["import cluster from 'cluster';", 'src/routing/pick.ts'],
      ["import { Buffer } from 'buffer';", 'src/framing/x.ts'],
      ["import { fetch } from 'undici';", 'src/services.ts'],
      ["import { Pool } from 'undici/pool';", 'src/services.ts'],
      ["import Redis from 'ioredis';", 'src/auth/key-cache.ts'],
      ["import pg from 'pg';", 'src/db/client.ts'],
      ["import { drizzle } from 'drizzle-orm/node-postgres';", 'src/db/client.ts'],
      ["import { serve } from '@hono/node-server';", 'src/gateway.ts'],
      ["import { env } from 'cloudflare:workers';", 'src/gateway.ts'],
      ["const fs = await import('node:fs');", 'src/config/load-config.ts'],
      ["const redis = await import('ioredis');", 'src/auth/key-cache.ts'],
      ["import { startServer } from '../adapters/node/server.ts';", 'src/gateway.ts'],
      ["import { createNodeServices } from '../../adapters/node/services.ts';", 'src/routes/chat.ts'],
      ["import { openAiTranslator } from '../providers/openai/openai-translator.ts';", 'src/gateway.ts'],
      ["export * from '../../providers/anthropic/index.ts';", 'src/routing/registry.ts'],
      ["import type { Redis } from '../adapters/node/redis-cache.ts';", 'src/services.ts'],
    ])('rejects %s in %s', async (code, filePath) => {
      expect(await restrictions(code, filePath)).not.toEqual([]);
    });

    it.each([
      ["import { GatewayError } from '../errors.ts';", 'src/framing/decode-json-events.ts'],
      ["import * as z from 'zod/mini';", 'src/config/config-schema.ts'],
      ["import { Hono } from 'hono';", 'src/gateway.ts'],
      ["import { pgTable } from 'drizzle-orm/pg-core';", 'src/db/schema.ts'],
      ["import { resolveModelGroups } from './routing/resolve-model-groups.ts';", 'src/gateway.ts'],
    ])('allows %s in %s', async (code, filePath) => {
      expect(await restrictions(code, filePath)).toEqual([]);
    });

    it('lets a test beside the code read fixtures with node:fs, but not reach adapters/', async () => {
      expect(await restrictions("import { readFileSync } from 'node:fs';", 'src/framing/sse-decoder.test.ts')).toEqual(
        [],
      );
      expect(
        await restrictions("import { x } from '../../adapters/node/x.ts';", 'src/framing/sse-decoder.test.ts'),
      ).not.toEqual([]);
    });
  });

  describe('providers/ import only src/canonical, src/errors and src/framing', () => {
    it.each([
      ["import { fetch } from 'undici';", 'providers/openai/openai-request.ts'],
      ["import { createHash } from 'node:crypto';", 'providers/bedrock/bedrock-request.ts'],
      ["import { createHash } from 'crypto';", 'providers/bedrock/bedrock-request.ts'],
      ["import { createNodeServices } from '../../adapters/node/services.ts';", 'providers/openai/openai-request.ts'],
      ["import { resolveModelGroups } from '../../src/routing/resolve-model-groups.ts';", 'providers/openai/x.ts'],
      ["import { createGateway } from '../../src/index.ts';", 'providers/openai/openai-request.ts'],
      ["import { createGateway } from '../../src';", 'providers/openai/openai-request.ts'],
      ["import { x } from '../../../src/config/config-schema.ts';", 'providers/openai-compatible/groq/groq.ts'],
    ])('rejects %s in %s', async (code, filePath) => {
      expect(await restrictions(code, filePath)).not.toEqual([]);
    });

    it.each([
      [
        "import type { CanonicalChatRequest } from '../../src/canonical/index.ts';",
        'providers/openai/openai-request.ts',
      ],
      ["import { GatewayError } from '../../src/errors.ts';", 'providers/openai/openai-error.ts'],
      ["import { decodeJsonEvents } from '../../src/framing/index.ts';", 'providers/openai/openai-stream.ts'],
      ["import * as z from 'zod/mini';", 'providers/openai/openai-response.ts'],
      ["import { base } from '../openai-compatible/openai-compatible-request.ts';", 'providers/groq/groq-request.ts'],
    ])('allows %s in %s', async (code, filePath) => {
      expect(await restrictions(code, filePath)).toEqual([]);
    });
  });

  describe('adapters/ import anything', () => {
    it.each([
      ["import { readFileSync } from 'node:fs';", 'adapters/node/server.ts'],
      ["import cluster from 'node:cluster';", 'adapters/node/server.ts'],
      ["import { Agent } from 'undici';", 'adapters/node/upstream-client.ts'],
      ["import { createGateway } from '../../src/index.ts';", 'adapters/node/server.ts'],
      ["import { openAiTranslator } from '../../providers/openai/openai-translator.ts';", 'adapters/node/server.ts'],
    ])('allows %s in %s', async (code, filePath) => {
      expect(await restrictions(code, filePath)).toEqual([]);
    });
  });
});

describe('zod is imported as a namespace', { timeout: 60_000 }, () => {
  it('rejects the named `z` import that defeats tree-shaking in the Worker bundle', async () => {
    const [result] = await eslint.lintText("import { z } from 'zod/mini';\nexport const schema = z.string();\n", {
      filePath: 'src/config/example.ts',
    });
    expect(result?.messages.map((message) => message.ruleId)).toContain('no-restricted-syntax');
    const [allowed] = await eslint.lintText("import * as z from 'zod/mini';\nexport const schema = z.string();\n", {
      filePath: 'src/config/example.ts',
    });
    expect(allowed?.messages).toEqual([]);
  });
});
