#!/usr/bin/env node
// npm run bench: every benchmark script in this folder (each a standalone *.mjs; lib.mjs and
// logs.mjs are helpers; mutate.mjs and the other mutat*.mjs scripts belong to `npm run mutate`, an
// hour of Stryker, not a benchmark), in name order; exits 1 if any misses its target. Not part of npm test.
// `node bench/run.js doctor up` runs only the scripts whose names start with those words. A script
// that cannot run here (exit 3: dynamo-up.mjs without the real-Dynamo venv) says why and is counted
// as skipped, not as met.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const HELPERS = new Set(['lib.mjs', 'logs.mjs']);
// By prefix, so a new mutation tool is never run as a benchmark (mutation-recheck.mjs was: exit 2).
const isBenchmark = (s) => s.endsWith('.mjs') && !HELPERS.has(s) && !s.startsWith('mutat');
const only = process.argv.slice(2);
const suites = readdirSync(here)
  .filter(isBenchmark)
  .sort()
  .filter((s) => only.length === 0 || only.some((o) => s.startsWith(o)));
const SKIPPED = 3;
let failed = 0;
const skipped = [];
for (const s of suites) {
  console.log(`\n== ${s}`);
  const r = spawnSync(process.execPath, [join(here, s)], { stdio: 'inherit' });
  if (r.status === SKIPPED) skipped.push(s);
  else if (r.status !== 0) {
    failed++;
    console.log(`!! ${s} missed its target (exit ${r.status})`);
  }
}
const ran = skipped.length ? ` (skipped: ${skipped.join(', ')})` : '';
console.log(failed ? `\n${failed} benchmark(s) missed their targets${ran}` : `\nall benchmarks that ran within targets${ran}`);
process.exit(failed ? 1 : 0);
