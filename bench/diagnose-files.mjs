// `diagnose` on a folder of 10,000 small logs (2,500 runs x 4 processes, ~60 lines each, a failure
// in some) against `grep -rEc` with the same patterns over the same folder, alternating pairs.
// Target: <= 5x grep; counts agree.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, loadNote, median, report } from './lib.mjs';
import { GREP_PATTERN, block, measure } from './logs.mjs';

const RUNS = 2500;
const PAIRS = Number(process.env.DD_BENCH_PAIRS ?? 5);
const tmp = mkdtempSync(join(tmpdir(), 'dd-bench-diagfiles-'));
const names = ['frontend', 'agg-0', 'agg-1', 'agg-2'];
const bodies = [block(60, 997), block(60, 37, 5), block(60, 53, 40), block(60, 997, 500)];
for (let r = 0; r < RUNS; r++) {
  const dir = join(tmp, `run-${String(r).padStart(4, '0')}`, 'logs');
  mkdirSync(dir, { recursive: true });
  names.forEach((n, i) => writeFileSync(join(dir, `${n}.log`), bodies[(i + r) % bodies.length]));
}
let ok = false;
try {
  const before = loadNote();
  const g = [];
  const d = [];
  for (let i = 0; i < PAIRS; i++) {
    g.push(await measure('grep', ['-rEc', GREP_PATTERN, tmp]));
    d.push(await measure(process.execPath, [BIN, 'diagnose', '--json', tmp]));
  }
  const doc = JSON.parse(d[0].out);
  const found = doc.findings.reduce((s, f) => s + f.count, 0);
  const grepCount = g[0].out.trim().split('\n').reduce((s, l) => s + Number(l.slice(l.lastIndexOf(':') + 1)), 0);
  const gm = median(g.map((r) => r.ms));
  const dm = median(d.map((r) => r.ms));
  const ratio = dm / gm;
  ok = ratio <= 5 && found === grepCount && doc.files === RUNS * names.length;
  report([
    ['machine', `${before} (before); ${loadNote()} (after)`],
    [`grep -rEc, ${doc.files.toLocaleString('en-US')} files (median of ${PAIRS})`, `${gm.toFixed(0)} ms`],
    [`diagnose (median of ${PAIRS})`, `${dm.toFixed(0)} ms, peak RSS ${Math.max(...d.map((r) => r.rssMB)).toFixed(0)} MB`],
    ['ratio', `${ratio.toFixed(2)}x (target <= 5x; CPU ${(median(d.map((r) => r.cpuMs)) / median(g.map((r) => r.cpuMs))).toFixed(2)}x); matching lines ${found.toLocaleString('en-US')} vs grep ${grepCount.toLocaleString('en-US')}${found === grepCount ? '' : ' DIFFER'}`],
  ]);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
