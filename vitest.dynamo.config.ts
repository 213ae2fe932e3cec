import { defineConfig } from 'vitest/config';

// `npm run test:dynamo`: the real-Dynamo tier (test/dynamo). Real frontend and mocker processes
// on two cores: one file at a time, generous timeouts for the first start of a cold venv.
export default defineConfig({
  test: {
    include: ['test/dynamo/**/*.test.ts'],
    globalSetup: ['test/dynamo/global-setup.ts'],
    testTimeout: 90_000,
    hookTimeout: 600_000,
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
  },
});
