import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import offpeakLocal from './eslint-rules/no-outside-doc-refs.mjs';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', 'bench/results/**', '../shared/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': 'off',
    },
  },
  {
    // Only src/extension.ts and src/vscode/ may talk to VS Code; the core, the webview and the
    // plain-Node tests stay runnable without it. Code that runs inside a VS Code extension host
    // (the test/vscode suites, the activation bench) is the exception.
    files: ['src/**', 'webview/**', 'test/**', 'scripts/**', 'bench/**'],
    ignores: ['src/extension.ts', 'src/vscode/**', 'test/vscode/**', 'test/fixtures/vscode-failing-suite/**', 'bench/vscode/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'vscode', message: 'Only src/vscode/ and src/extension.ts may import vscode.' },
            // Its classic build brings all of zod into each bundle (~190 kB); zod/mini keeps what is used.
            { name: 'zod', message: 'Build schemas with src/protocol/zod.ts (zod/mini, with English messages).' },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "ImportExpression[source.value='vscode']", message: 'Only src/vscode/ and src/extension.ts may import vscode.' },
        {
          selector: "CallExpression[callee.name='require'][arguments.0.value='vscode']",
          message: 'Only src/vscode/ and src/extension.ts may require vscode.',
        },
      ],
    },
  },
  {
    // A source file over 500 lines holds more than one job: split it by what it does. The panel
    // (webview/) is split by section the same way.
    files: ['src/**', 'webview/**'],
    rules: { 'max-lines': ['error', { max: 500, skipBlankLines: false, skipComments: false }] },
  },
  {
    // Comments and test titles cite only documents in this repository (docs/, READMEs).
    // The rule's own file and its test spell out what it flags.
    ignores: ['eslint-rules/**', 'test/unit/lint-doc-refs.test.ts'],
    plugins: { 'offpeak-local': offpeakLocal },
    rules: { 'offpeak-local/no-outside-doc-refs': 'error' },
  },
  {
    files: ['**/*.mjs', '**/*.cjs', 'scripts/**', 'bench/**', 'test/**'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', __dirname: 'readonly', require: 'readonly' } },
  },
  {
    // CommonJS files (a mocha reporter, a --require preload) load with require: it is their import.
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
