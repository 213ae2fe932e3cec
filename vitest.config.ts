import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx', 'src/**/*.test.ts', 'src/**/*.test.tsx'],
    // The real-Dynamo tier runs with its own config (npm run test:dynamo, vitest.dynamo.config.ts).
    exclude: [...configDefaults.exclude, 'test/dynamo/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
