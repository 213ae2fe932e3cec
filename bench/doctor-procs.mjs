// `doctor --json` on a machine with 3,000 unrelated processes against the same machine with 10,
// one of the plan's ports held meanwhile (so ports.free looks for its holder). Blocks:
// 10 processes, 3,000, 10 again (load drift shows as a difference between the two anchors).
// Target: median with 3,000 <= 1.2x the median with 10. Also the longest event-loop stall while
// the process list is built in-process (what a spinner or a timeout would feel).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { BIN, ROOT, fakeEnv, loadNote, median, report, startSleepers, timeCpu } from './lib.mjs';

const N = Number(process.env.DD_BENCH_RUNS ?? 7);
const MANY = 3000;
const HELD_PORT = 8081; // agg's first worker system port
const env = fakeEnv();

// The holder is an ordinary listener of another process, as a leftover server would be.
const holder = spawn(process.execPath, ['-e', `require('net').createServer().listen(${HELD_PORT}, '0.0.0.0', () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
await once(holder.stdout, 'data');
process.once('exit', () => holder.kill('SIGKILL'));

const doctorRuns = () => {
  const out = [];
  for (let i = 0; i < N; i++) {
    const r = timeCpu(process.execPath, [BIN, 'doctor', '--json'], env);
    const doc = JSON.parse(r.stdout);
    const ports = doc.checks.find((c) => c.id === 'ports.free');
    if (ports.status !== 'fail' || !JSON.stringify(ports).includes(String(holder.pid))) throw new Error(`ports.free did not name the holder: ${JSON.stringify(ports)}`);
    out.push(r);
  }
  return out;
};

/** The longest event-loop stall while listing every process, in this process (best of 3 scans). */
async function stall() {
  const { listProcesses } = await import(join(ROOT, 'dist', 'host', 'processes.js'));
  const results = [];
  for (let i = 0; i < 3; i++) {
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    const t0 = performance.now();
    const procs = await listProcesses();
    const ms = performance.now() - t0;
    h.disable();
    results.push({ ms, maxStallMs: h.max / 1e6, n: procs.length });
  }
  return results.reduce((a, b) => (b.maxStallMs < a.maxStallMs ? b : a));
}

const notes = [loadNote()];
let few = startSleepers(10);
const a1 = doctorRuns();
const stallFew = await stall();
await few.stop();
const many = startSleepers(MANY);
notes.push(loadNote());
const b = doctorRuns();
const stallMany = await stall();
await many.stop();
few = startSleepers(10);
const a2 = doctorRuns();
await few.stop();
notes.push(loadNote());
holder.kill('SIGKILL');

const anchor = median([...a1, ...a2].map((r) => r.ms));
const heavy = median(b.map((r) => r.ms));
const ratio = heavy / anchor;
report([
  ['machine', notes.join(' | ')],
  [`doctor --json, 10 extra processes (median of ${2 * N})`, `${anchor.toFixed(0)} ms wall (first block ${median(a1.map((r) => r.ms)).toFixed(0)}, last ${median(a2.map((r) => r.ms)).toFixed(0)}), ${median([...a1, ...a2].map((r) => r.cpuMs)).toFixed(0)} ms CPU`],
  [`doctor --json, ${MANY} extra processes (median of ${N})`, `${heavy.toFixed(0)} ms wall, ${median(b.map((r) => r.cpuMs)).toFixed(0)} ms CPU`],
  ['ratio', `${ratio.toFixed(2)}x (target <= 1.2x)`],
  ['process list in-process, 10 extra', `${stallFew.ms.toFixed(0)} ms for ${stallFew.n} processes, longest event-loop stall ${stallFew.maxStallMs.toFixed(1)} ms`],
  [`process list in-process, ${MANY} extra`, `${stallMany.ms.toFixed(0)} ms for ${stallMany.n} processes, longest event-loop stall ${stallMany.maxStallMs.toFixed(1)} ms`],
]);
process.exit(ratio <= 1.2 ? 0 : 1);
