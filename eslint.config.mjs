import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    // Only src/extension.ts and src/vscode/ may talk to VS Code; the core stays testable in plain Node.
    files: ['src/**/*.ts'],
    ignores: ['src/extension.ts', 'src/vscode/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [{ name: 'vscode', message: 'Only src/vscode/ and src/extension.ts may import vscode.' }] }] },
  },
  {
    files: ['**/*.mjs', '**/*.cjs', 'scripts/**', 'bench/**', 'test/**'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', __dirname: 'readonly', require: 'readonly' } },
  },
);
