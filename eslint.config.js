import tseslint from 'typescript-eslint';

const noExit = { object: 'process', property: 'exit', message: 'library code never exits the process' };

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.soak/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
  { files: ['src/**/*.ts'], rules: { 'no-restricted-properties': ['error', noExit] } },
  {
    // Operators and the store are marble-tested in virtual time: every clock
    // read and every wait must go through an injected SchedulerLike.
    files: ['src/operators/**/*.ts', 'src/store/**/*.ts'],
    rules: {
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'setImmediate', 'performance'],
      'no-restricted-properties': [
        'error',
        noExit,
        { object: 'Date', property: 'now', message: 'read time from the injected SchedulerLike' },
        { object: 'performance', property: 'now', message: 'read time from the injected SchedulerLike' },
      ],
    },
  },
);
