// @ts-check
/**
 * ESLint flat config. Syntax-only (no type-aware rules), so `pnpm lint` stays fast; `pnpm typecheck` does the typing.
 *
 * Its main job is the dependency rule of design.md §2, enforced here rather than remembered:
 *
 * - `src/` (the core) imports neither `providers/` nor `adapters/`;
 * - `providers/` imports from `src/` only `src/canonical`, `src/errors` and `src/framing`, and nothing from `adapters/`;
 * - neither imports a runtime: no `node:*`, no bare Node built-ins (`fs`, `http`, `cluster` ...), no `cloudflare:*` or
 *   `bun:*` modules, and no Node-only packages (undici, ioredis, pg, ...), so a Worker bundle can never contain them.
 *   Runtime APIs live only in `adapters/` (style.md habits 6 and 7).
 *
 * Static imports and re-exports are checked by `no-restricted-imports`; `import()` and `require()` with a literal
 * specifier by the local `torii/no-restricted-dynamic-imports`, which takes the same patterns. Relative specifiers are
 * matched by shape (`../adapters/...`, `../../src/routing/...`), whatever the importing file's depth.
 *
 * Test files beside the code (`*.test.ts`) may use Node built-ins (to read `__fixtures__/`, say) because they never
 * ship in a bundle, but they keep the layer rules. tests/lint/dependency-rule.test.ts proves the rule both ways.
 */
import { builtinModules } from 'node:module';
import { defineConfig, globalIgnores } from 'eslint/config';
import { builtinRules } from 'eslint/use-at-your-own-risk';
import tseslint from 'typescript-eslint';

/** @typedef {{ regex: string, message: string, caseSensitive?: boolean }} RestrictedPattern */

/** Node-only packages: each opens sockets or files itself, so it belongs behind a seam filled by adapters/node. */
const nodeOnlyPackages = [
  'undici',
  'ioredis',
  'pg',
  'postgres',
  'prom-client',
  '@hono/node-server',
  '@electric-sql/pglite',
  // Drizzle's runtime-neutral schema (`drizzle-orm/pg-core`) is fine in src/db; its drivers are not.
  'drizzle-orm/node-postgres',
  'drizzle-orm/postgres-js',
  'drizzle-orm/pglite',
];

const escapeRegex = (/** @type {string} */ text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const anyOf = (/** @type {string[]} */ names) => names.map(escapeRegex).join('|');

/** Built-in names without the `node:` prefix (`fs`, `fs/promises`, `cluster` ...); prefix-only ones are caught by `^node:`. */
const bareBuiltins = builtinModules.filter((name) => !name.startsWith('node:'));

/** A relative specifier: `./` or `../`, then any number of `../`. */
const relative = String.raw`^\.{1,2}/(?:\.\./)*`;

/** @type {RestrictedPattern[]} */
const runtimeImports = [
  {
    regex: String.raw`^node:`,
    message: 'Node built-ins belong in adapters/ only; put the need behind a seam in src/services.ts (design.md §2).',
  },
  {
    regex: `^(?:${anyOf(bareBuiltins)})(?:/.*)?$`,
    message: 'Node built-ins belong in adapters/ only; put the need behind a seam in src/services.ts (design.md §2).',
  },
  {
    regex: `^(?:${anyOf(nodeOnlyPackages)})(?:/.*)?$`,
    message:
      'Node-only package: it must never reach a Worker bundle. Use it from adapters/node behind a seam (design.md §2).',
  },
  {
    regex: String.raw`^(?:cloudflare|bun):`,
    message: 'Runtime modules belong in adapters/ only (design.md §2, style.md habit 6).',
  },
].map((pattern) => ({ ...pattern, caseSensitive: true }));

/** @type {RestrictedPattern[]} */
const coreLayer = [
  {
    regex: `${relative}(?:adapters|providers)(?:/|$)`,
    message: 'src/ imports neither providers/ nor adapters/ (design.md §2); depend on a seam src/ owns instead.',
  },
  {
    regex: String.raw`^torii(?:/|$)`,
    message: "Import the core relatively; the package's own entry points include the adapters.",
  },
].map((pattern) => ({ ...pattern, caseSensitive: true }));

/** @type {RestrictedPattern[]} */
const providerLayer = [
  {
    regex: `${relative}adapters(?:/|$)`,
    message: 'providers/ must not import adapters/ (design.md §2).',
  },
  {
    // `../../src` or `../../src/<anything but canonical, errors, framing>`
    regex: `${relative}src(?:/(?!(?:canonical|errors|framing)(?:/|\\.[cm]?[jt]s$|$)).*)?$`,
    message: 'providers/ may import only src/canonical, src/errors and src/framing from the core (design.md §2).',
  },
  {
    regex: String.raw`^torii(?:/|$)`,
    message: "Import the core relatively; the package's own entry points include the adapters.",
  },
].map((pattern) => ({ ...pattern, caseSensitive: true }));

/**
 * `no-restricted-imports` does not see `import('x')` or `require('x')`; this rule applies the same `patterns` (regex
 * form) to them, so a lazy `await import('ioredis')` in src/ is caught too.
 *
 * @type {import('eslint').Rule.RuleModule}
 */
const noRestrictedDynamicImports = {
  meta: {
    type: 'problem',
    docs: { description: 'Apply the no-restricted-imports regex patterns to import() and require()' },
    schema: [
      {
        type: 'object',
        properties: {
          patterns: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                regex: { type: 'string' },
                message: { type: 'string' },
                caseSensitive: { type: 'boolean' },
              },
              required: ['regex'],
              additionalProperties: false,
            },
          },
        },
        additionalProperties: false,
      },
    ],
    messages: { restricted: "'{{specifier}}' import is restricted from being used by a pattern. {{message}}" },
  },
  create(context) {
    /** @type {RestrictedPattern[]} */
    const patterns = context.options[0]?.patterns ?? [];
    const matchers = patterns.map((pattern) => ({
      test: new RegExp(pattern.regex, pattern.caseSensitive ? 'u' : 'iu'),
      message: pattern.message ?? '',
    }));
    /** @param {import('estree').Node | undefined} node */
    const check = (node) => {
      if (!node) return;
      /** @type {string | undefined} */
      let specifier;
      if (node.type === 'Literal' && typeof node.value === 'string') specifier = node.value;
      else if (node.type === 'TemplateLiteral' && node.expressions.length === 0)
        specifier = node.quasis[0]?.value.cooked ?? undefined;
      if (specifier === undefined) return;
      const matcher = matchers.find(({ test }) => test.test(specifier));
      if (matcher) context.report({ node, messageId: 'restricted', data: { specifier, message: matcher.message } });
    };
    return {
      ImportExpression: (node) => check(node.source),
      CallExpression(node) {
        if (node.callee.type === 'Identifier' && node.callee.name === 'require') {
          const [argument] = node.arguments;
          if (argument && argument.type !== 'SpreadElement') check(argument);
        }
      },
    };
  },
};

/** @param {RestrictedPattern[]} patterns */
const restrictImports = (patterns) => ({
  'no-restricted-imports': ['error', { patterns }],
  'torii/no-restricted-dynamic-imports': ['error', { patterns }],
});

/**
 * ESLint's own recommended rules, read from ESLint itself: `@eslint/js` is not a dependency of eslint 10, and
 * pnpm does not hoist it.
 */
const eslintRecommended = Object.fromEntries(
  [...builtinRules].filter(([, rule]) => rule.meta?.docs?.recommended).map(([name]) => [name, 'error']),
);

/** Globals of the Node running the config, for plain .js/.mjs scripts (TypeScript files leave `no-undef` to tsc). */
const nodeGlobals = Object.fromEntries(Object.getOwnPropertyNames(globalThis).map((name) => [name, 'readonly']));

const testFiles = ['**/*.test.ts', '**/__fixtures__/**', '**/test-utils/**'];

export default defineConfig(
  globalIgnores(
    ['dist/', 'node_modules/', '.wrangler/', 'bench/results/', 'coverage/', '.toolchain/', '.torii-data/'],
    'torii/ignores',
  ),
  {
    name: 'torii/files',
    files: ['**/*.{js,mjs,cjs,ts,mts,cts}'],
  },
  {
    name: 'torii/javascript',
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { ecmaVersion: 'latest', sourceType: 'module', globals: nodeGlobals },
  },
  { name: 'eslint/recommended', rules: eslintRecommended },
  ...tseslint.configs.recommended,
  {
    name: 'torii/base',
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { torii: { rules: { 'no-restricted-dynamic-imports': noRestrictedDynamicImports } } },
    rules: {
      // `_name` marks a parameter or binding that is deliberately unused.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      eqeqeq: ['error', 'smart'],
      // `import { z } from 'zod/mini'` pulls zod's whole namespace object (every locale) into the Worker bundle
      // (~500 KiB instead of ~120 KiB); a namespace import lets the bundler keep only what is used.
      'no-restricted-syntax': [
        'error',
        {
          selector: "ImportDeclaration[source.value=/^zod/] > ImportSpecifier[imported.name='z']",
          message: "Import zod as a namespace (`import * as z from 'zod/mini'`) so bundles tree-shake it.",
        },
      ],
      'no-var': 'error',
      'prefer-const': 'error',
    },
  },
  {
    // `ChatStreamReducer<any>`: each translator's stream state is its own (an existential type), which `unknown`
    // cannot express in a parameter position. Drop this block once that line carries its own
    // `// eslint-disable-next-line @typescript-eslint/no-explicit-any -- <reason>`.
    name: 'torii/seam-any',
    files: ['src/canonical/provider-translator.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  // The dependency rule (design.md §2). Later blocks replace a rule's options wholesale, so each block lists them all.
  {
    name: 'torii/dependency-rule/src',
    files: ['src/**'],
    rules: restrictImports([...coreLayer, ...runtimeImports]),
  },
  {
    name: 'torii/dependency-rule/providers',
    files: ['providers/**'],
    rules: restrictImports([...providerLayer, ...runtimeImports]),
  },
  {
    name: 'torii/dependency-rule/src-tests',
    files: testFiles.map((glob) => `src/${glob}`),
    rules: restrictImports(coreLayer),
  },
  {
    name: 'torii/dependency-rule/providers-tests',
    files: testFiles.map((glob) => `providers/${glob}`),
    rules: restrictImports(providerLayer),
  },
);
