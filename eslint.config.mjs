// ESLint 9 flat config: a short list of type-aware rules that catch real bugs (promises nobody waits for, promises
// where a callback's return value is ignored), consistent `import type` (which the layer rules of
// .dependency-cruiser.cjs rely on to tell type-only imports from value imports), and no Node built-ins in workflow
// code. Formatting is Prettier's job (.prettierrc.json), not ESLint's.
import { builtinModules } from 'node:module';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** The folders of TypeScript source, and the tests and benchmarks that use them. */
const SOURCE_FOLDERS = ['api', 'activities', 'workflows', 'worker', 'siem', 'sigma', 'db', 'cli', 'config', 'domain'];
const TYPESCRIPT_FILES = [...SOURCE_FOLDERS, 'test', 'bench'].map((folder) => `${folder}/**/*.ts`);
/** The console's browser sources (console/tsconfig.json: DOM, Preact's JSX). */
const CONSOLE_FILES = ['console/src/**/*.ts', 'console/src/**/*.tsx'];

/** Correctness rules that need no type information: cheap, and they pass on today's code. */
const CORE_CORRECTNESS = {
  'array-callback-return': 'error',
  eqeqeq: ['error', 'always', { null: 'ignore' }],
  'no-async-promise-executor': 'error',
  'no-compare-neg-zero': 'error',
  'no-cond-assign': 'error',
  'no-constant-binary-expression': 'error',
  'no-debugger': 'error',
  'no-duplicate-case': 'error',
  'no-empty-pattern': 'error',
  'no-fallthrough': 'error',
  'no-self-assign': 'error',
  'no-self-compare': 'error',
  'no-sparse-arrays': 'error',
  'no-unsafe-finally': 'error',
  'no-unsafe-negation': 'error',
  'no-unsafe-optional-chaining': 'error',
  'no-unreachable-loop': 'error',
  'no-useless-backreference': 'error',
  'use-isnan': 'error',
  'valid-typeof': 'error',
};

const WORKFLOW_SANDBOX = 'Workflow code runs in the Temporal sandbox and must be deterministic: no Node built-ins. Do I/O in an activity; `import type` is fine.';

export default defineConfig(
  {
    // Not source: dependencies, build and test output, data, installed tools, generated SQL, recorded histories.
    ignores: ['node_modules/', 'dist/', 'console/dist/', 'test-artifacts/', 'coverage/', 'data/', '.tools/', '.jest-cache/', 'db/migrations/', 'test/replay/histories/'],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    // Plain JavaScript (cli/bin.js, tools/*.mjs, the tools' config files): no type information.
    files: ['**/*.{js,mjs,cjs}'],
    rules: CORE_CORRECTNESS,
  },
  {
    files: [...TYPESCRIPT_FILES, ...CONSOLE_FILES],
    languageOptions: {
      parser: tseslint.parser,
      // Type information from tsconfig.json, which covers the source folders, test/ and bench/.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      ...CORE_CORRECTNESS,
      // A promise that is neither awaited, returned, .catch()ed nor explicitly `void`ed: its rejection is lost.
      '@typescript-eslint/no-floating-promises': 'error',
      // An async function where a void callback is expected (e.g. an Express handler, an event listener, forEach).
      '@typescript-eslint/no-misused-promises': 'error',
      // Awaiting something that is not a promise (or handing non-promises to Promise.all).
      '@typescript-eslint/await-thenable': 'error',
      // `return promise` inside try/catch skips the catch and the finally's ordering: `return await` there.
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      '@typescript-eslint/no-array-delete': 'error',
      '@typescript-eslint/no-duplicate-type-constituents': 'error',
      '@typescript-eslint/no-for-in-array': 'error',
      '@typescript-eslint/no-implied-eval': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      // require() in TypeScript bypasses the types; an exception says why with an eslint-disable comment.
      '@typescript-eslint/no-require-imports': 'error',
      // `import type` for imports used only as types; `import { x, type Y }` when mixed (the style already in use).
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'inline-type-imports' }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: builtinModules.map((name) => ({ name, message: WORKFLOW_SANDBOX, allowTypeImports: true })),
          patterns: [{ regex: '^node:', message: WORKFLOW_SANDBOX, allowTypeImports: true }],
        },
      ],
    },
  },
);
