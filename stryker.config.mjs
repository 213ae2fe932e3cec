// Mutation testing: `npm run mutate` (bench/mutate.mjs wraps this file). Not part of npm test or CI.
// How to run it, what it costs and the last scores: bench/MUTATION.md.

/** The folders in scope; bench/mutate.mjs narrows to some of them with `npm run mutate -- src/plan`. */
export const SCOPE = [
  'src/run/**/*.ts',
  'src/doctor/**/*.ts',
  'src/diagnose/**/*.ts',
  'src/plan/**/*.ts',
  'src/recipe/**/*.ts',
  'src/probe/**/*.ts',
  // src/host: only the pure parsers and rules; the adapters that run programs (nvidia-smi.ts,
  // python.ts, ucx.ts, ...) are exercised by the e2e tests through the built CLI, which never
  // holds a mutant.
  'src/host/**/parse-*.ts',
  // The recipe build step (was src/recipe/compile-builtins.ts); the CUDA rules and GPU class are in src/plan.
  'src/host/files/compile-builtins.ts',
  'src/host/procs/engine-procs.ts',
  'src/host/hf/hf-paths.ts',
];

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: SCOPE,
  testRunner: 'vitest',
  // Unit tests only: the e2e tests run bin/dynamo-dev.js -> dist/, built from the unmutated
  // sources, so they can never kill a mutant (see vitest.mutate.config.ts).
  vitest: { configFile: 'vitest.mutate.config.ts' },
  coverageAnalysis: 'perTest',
  checkers: ['typescript'],
  // src only: a mutant that is a type error in src/ could never ship; test files do not matter.
  tsconfigFile: 'tsconfig.build.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  // 2 cores shared with other suites: one test runner (plus the checker) keeps the machine usable.
  // Raise with `npm run mutate -- --concurrency 2` on an idle machine.
  concurrency: 1,
  // A busy machine slows a normal test run several-fold; a short timeout would count slow
  // mutants as "Timeout" (detected) when nothing is wrong with them.
  timeoutMS: 10_000,
  timeoutFactor: 2,
  dryRunTimeoutMinutes: 10,
  // dist/ is copied into the sandbox on purpose (bench/mutate.mjs builds it first, unmutated): a few
  // unit tests start a second process on the built module (state.test.ts: an up killed with SIGKILL
  // releases the lock) to play "another dynamo-dev".
  ignorePatterns: ['.bench-tmp', 'reports'],
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  clearTextReporter: { reportMutants: false, reportTests: false, allowEmojis: false },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
