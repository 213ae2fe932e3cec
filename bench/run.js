#!/usr/bin/env node
// npm run bench: start-up, doctor, diagnose, up and teardown timings (not part of npm test).
// Each sub-benchmark is a standalone script; this runs them in turn and fails if any misses its target.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const suites = ['startup.mjs', 'doctor.mjs', 'diagnose.mjs', 'up.mjs', 'teardown.mjs'].filter(
  (s) => only.length === 0 || only.some((o) => s.startsWith(o)),
);
let failed = 0;
for (const s of suites) {
  console.log(`\n== ${s}`);
  const r = spawnSync(process.execPath, [join(here, s)], { stdio: 'inherit' });
  if (r.status !== 0) {
    failed++;
    console.log(`!! ${s} missed its target (exit ${r.status})`);
  }
}
console.log(failed ? `\n${failed} benchmark(s) missed their targets` : '\nall benchmarks within targets');
process.exit(failed ? 1 : 0);
