import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx', 'src/**/*.test.ts', 'src/**/*.test.tsx'],
    // The real tiers run with their own configs (npm run test:dynamo, test:vllm, test:nixl, test:engine).
    exclude: [...configDefaults.exclude, 'test/dynamo/**', 'test/vllm/**', 'test/nixl/**', 'test/engine/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
