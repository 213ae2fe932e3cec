#!/usr/bin/env node
// Re-checks the undetected mutants of a Stryker JSON report by hand: each one is applied to a scratch
// copy of the sources (the copy must hold the sources the report was made from), the given unit
// tests run with --bail 1, and a failing run counts as killed. Why: in this setup (vitest-runner
// 9.6.1, perTest coverage) Stryker tests a static mutant (code run at module load: the signature
// table, regex constants) against far fewer tests than cover it, so its survivors list holds mutants
// the tests do kill (bench/MUTATION.md, "after round 2").
//   node bench/mutation-recheck.mjs REPORT.json COPY_DIR FILE_FILTER TEST...
//   e.g. node bench/mutation-recheck.mjs reports/mutation/mutation.json /tmp/copy src/diagnose/ test/unit/diagnose
// Prints one line per mutant: "KILLED  file:line:col Mutator: replacement" or "SURVIVE ...".
// Env SKIP=FILE: skip the mutants FILE already lists as KILLED (an earlier pass).
import { readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const [report, dir, filter, ...tests] = process.argv.slice(2);
if (!report || !dir || !filter || tests.length === 0) {
  console.error('usage: node bench/mutation-recheck.mjs REPORT.json COPY_DIR FILE_FILTER TEST...');
  process.exit(2);
}
const r = JSON.parse(readFileSync(report, 'utf8'));
const skip = new Set(process.env.SKIP
  ? readFileSync(process.env.SKIP, 'utf8').split('\n').map((l) => /^KILLED {2}(\S+) (\w+): (.*)$/.exec(l)).filter(Boolean).map((m) => `${m[1]} ${m[2]} ${m[3]}`)
  : []);
const shown = (m) => (m.replacement ?? '').replace(/\s+/g, ' ').slice(0, 60);
for (const [f, res] of Object.entries(r.files)) {
  if (!f.includes(filter)) continue;
  const rel = f.replace(/.*?(src\/)/, '$1');
  const path = `${dir}/${rel}`;
  const orig = readFileSync(path, 'utf8');
  const lines = orig.split('\n');
  const offset = (loc) => lines.slice(0, loc.line - 1).reduce((s, l) => s + l.length + 1, 0) + loc.column - 1;
  try {
    for (const m of res.mutants) {
      if (m.status !== 'Survived' && m.status !== 'NoCoverage') continue;
      const at = `${rel}:${m.location.start.line}:${m.location.start.column}`;
      if (skip.has(`${at} ${m.mutatorName} ${shown(m)}`)) continue;
      writeFileSync(path, orig.slice(0, offset(m.location.start)) + m.replacement + orig.slice(offset(m.location.end)));
      const t = spawnSync('npx', ['vitest', 'run', '--bail', '1', ...tests], { cwd: dir, encoding: 'utf8' });
      console.log(`${t.status !== 0 ? 'KILLED ' : 'SURVIVE'} ${at} ${m.mutatorName}: ${shown(m)}`);
    }
  } finally {
    writeFileSync(path, orig);
  }
}
