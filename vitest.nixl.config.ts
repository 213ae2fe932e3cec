import { defineConfig } from 'vitest/config';

// `npm run test:nixl`: the ucx.transports probe against the real NIXL 1.4.1 (test/nixl), no GPU.
// Two real NIXL processes per probe on two cores: one file at a time.
export default defineConfig({
  test: {
    include: ['test/nixl/**/*.test.ts'],
    globalSetup: ['test/nixl/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 600_000,
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
  },
});
