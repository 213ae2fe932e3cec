import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// Mutation testing (npm run mutate) runs only the tests that import src/ directly. The e2e tests
// spawn the BUILT CLI (bin/dynamo-dev.js -> dist/), which never contains Stryker's mutants, so
// they could only ever pass for a mutant and would cost minutes per run. See bench/MUTATION.md.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/unit/**/*.test.{ts,tsx}', 'src/**/*.test.{ts,tsx}'],
    // Timing tests skipped; a mutated stop guard must not be able to signal the mutation run itself.
    setupFiles: [...[base.test?.setupFiles ?? []].flat(), 'test/helpers/mutation-setup.ts'],
  },
});
