import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const packageName = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { name: string }).name;
const readme = readFileSync(new URL('README.md', root), 'utf8');

/** Runs npm quietly, without audits, funding notices or update checks. */
function npm(args: string[], cwd: string): string {
  return execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
}

// Defect 17 of the hardening issue: the README said `npm install torii`, which installs an unrelated package that
// owns that name on the registry. The README's install line must name this package, and installing what `npm pack`
// makes, as the README shows, must give a working library.
describe('the npm package the README installs', () => {
  it('is this package: the README installs and imports the name in package.json, and nothing else', () => {
    const installs = [...readme.matchAll(/npm install ([^\s`]+)/g)].map((match) => match[1]);
    expect(installs).toContain(packageName);
    const imported = new Set([...readme.matchAll(/from '([^']+)'/g)].map((match) => match[1] as string));
    for (const specifier of imported) {
      if (specifier.startsWith('torii')) expect(specifier.split('/')[0]).toBe(packageName);
    }
    expect(packageName).not.toBe('torii');
  });

  it(
    'installs from its tarball in a fresh directory and serves a request through createGateway',
    { timeout: 300_000 },
    () => {
      const directory = mkdtempSync(join(tmpdir(), 'torii-package-install-'));
      const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', directory], root.pathname)) as [
        { filename: string; name: string },
      ];
      expect(packed[0].name).toBe(packageName);
      writeFileSync(
        join(directory, 'package.json'),
        JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
      );
      npm(['install', '--prefer-offline', join(directory, packed[0].filename), 'hono'], directory);
      writeFileSync(
        join(directory, 'main.js'),
        `import { Hono } from 'hono';
import { createGateway } from '${packageName}';
const app = new Hono();
app.route('/llm', createGateway({ modelGroups: {} }, { masterKey: 'sk-package-test-key' }));
const live = await app.request('/llm/health/live');
const models = await app.request('/llm/v1/models', { headers: { authorization: 'Bearer sk-package-test-key' } });
console.log(JSON.stringify({ live: live.status, models: models.status }));
`,
      );
      const output = execFileSync(process.execPath, ['main.js'], { cwd: directory, encoding: 'utf8' });
      expect(JSON.parse(output.trim().split('\n').at(-1) as string)).toEqual({ live: 200, models: 200 });
    },
  );
});
