import { defineConfig } from 'vitest/config';

// `npm run test:vllm`: the released ai-dynamo[vllm] (vLLM and CUDA torch) without a GPU
// (test/vllm). Its parsers, its log formatting and its worker's real failure without a GPU; one
// file at a time (every python start imports torch: ~10-30 s each on two cores).
export default defineConfig({
  test: {
    include: ['test/vllm/**/*.test.ts'],
    globalSetup: ['test/vllm/global-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 3_600_000,
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
  },
});
