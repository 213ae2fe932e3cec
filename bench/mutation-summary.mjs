#!/usr/bin/env node
// The mutation score per folder from Stryker's JSON report (reports/mutation/mutation.json), and
// every mutant that no test detected, listed in reports/mutation/survivors.txt.
//   node bench/mutation-summary.mjs [report.json...] [--survivors]   (--survivors: print the list too)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const printSurvivors = argv.includes('--survivors');
const paths = argv.filter((a) => !a.startsWith('--'));
if (paths.length === 0) paths.push(join(root, 'reports', 'mutation', 'mutation.json'));
// Several reports (e.g. of runs narrowed to different folders) are summed as one.
const report = { files: {} };
for (const p of paths) {
  try {
    Object.assign(report.files, JSON.parse(readFileSync(p, 'utf8')).files);
  } catch (err) {
    console.error(`mutation-summary: cannot read ${p} (${err.code ?? err.message}); run npm run mutate first`);
    process.exit(2);
  }
}
// Stryker's definitions: detected = Killed + Timeout; undetected = Survived + NoCoverage; CompileError,
// RuntimeError and Ignored mutants are not valid and count nowhere.
const KEYS = ['Killed', 'Timeout', 'Survived', 'NoCoverage', 'CompileError', 'RuntimeError', 'Ignored', 'Pending'];
const empty = () => Object.fromEntries(KEYS.map((k) => [k, 0]));
const rows = new Map(); // folder -> counts (own files only)
const rollups = new Map(); // folder -> counts (own files and every subfolder)
const parents = new Set(); // folders that have subfolders in the report
const total = empty();
const undetected = [];

const rel = (f) => (f.startsWith(root) ? f.slice(root.length + 1) : f);
for (const [file, result] of Object.entries(report.files)) {
  const name = rel(file);
  const folder = dirname(name);
  for (const m of result.mutants) {
    const add = (map, key) => {
      if (!map.has(key)) map.set(key, empty());
      map.get(key)[m.status]++;
    };
    add(rows, folder);
    const parts = folder.split('/');
    for (let i = 2; i <= parts.length; i++) add(rollups, parts.slice(0, i).join('/'));
    for (let i = 2; i < parts.length; i++) parents.add(parts.slice(0, i).join('/'));
    total[m.status]++;
    if (m.status === 'Survived' || m.status === 'NoCoverage') {
      const at = `${name}:${m.location.start.line}:${m.location.start.column}`;
      const repl = (m.replacement ?? '').replace(/\s+/g, ' ').slice(0, 80);
      undetected.push(`${m.status === 'NoCoverage' ? 'no-cov ' : 'survived'} ${at} ${m.mutatorName}: ${repl}`);
    }
  }
}

const pct = (n, d) => (d === 0 ? '  n/a' : `${((100 * n) / d).toFixed(1).padStart(5)}`);
function line(label, c) {
  const detected = c.Killed + c.Timeout;
  const valid = detected + c.Survived + c.NoCoverage;
  const invalid = c.CompileError + c.RuntimeError;
  return [
    label.padEnd(26),
    pct(detected, valid),
    pct(detected, detected + c.Survived),
    String(c.Killed).padStart(6),
    String(c.Timeout).padStart(5),
    String(c.Survived).padStart(6),
    String(c.NoCoverage).padStart(6),
    String(invalid).padStart(6),
    String(c.Ignored).padStart(5),
  ].join(' ');
}
const header = ['folder'.padEnd(26), 'score', 'cov.s', 'killed', 'tout', 'surv.', 'no-cov', 'errors', 'ignd'].join(' ');
console.log('\nMutation score per folder (score = detected / valid; cov.s = on covered code only)');
console.log(header);
const labels = [...new Set([...rows.keys(), ...parents])].sort();
for (const f of labels) {
  if (rows.has(f)) console.log(line(f, rows.get(f)));
  // a folder with subfolders also gets its total, marked with /**
  if (parents.has(f)) console.log(line(`${f}/**`, rollups.get(f)));
}
console.log(line('all in this report', total));

const out = join(root, 'reports', 'mutation', 'survivors.txt');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, undetected.join('\n') + (undetected.length ? '\n' : ''));
console.log(`\n${undetected.length} undetected mutant(s) (survived or no coverage) listed in ${rel(out)}`);
if (printSurvivors) console.log(undetected.join('\n'));
