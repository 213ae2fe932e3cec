// `doctor --json` on a machine with 3,000 unrelated processes against the same machine with 10,
// one of the plan's ports held meanwhile (so ports.free looks for its holder).
// Target: median with 3,000 <= 1.2x the median with 10. Also the longest event-loop stall while
// the process list is built in-process (what a spinner or a timeout would feel).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { BIN, ROOT, fakeEnv, loadNote, median, report, startSleepers, timeCpu } from './lib.mjs';

const N = Number(process.env.DD_BENCH_RUNS ?? 5);
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
  const { listProcesses } = await import(join(ROOT, 'dist', 'host', 'procs', 'processes.js'));
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

// Blocks 10 / 3,000 / 10 / 3,000 / 10: this machine's load drifts over minutes, and a case
// between two anchors on both sides is compared with what the machine did around it.
const notes = [loadNote()];
const anchors = [];
const heavies = [];
let stalls = {};
for (let round = 0; round < 2; round++) {
  const few = startSleepers(10);
  anchors.push(...doctorRuns());
  if (round === 0) stalls.few = await stall();
  await few.stop();
  const many = startSleepers(MANY);
  notes.push(loadNote());
  heavies.push(...doctorRuns());
  if (round === 0) stalls.many = await stall();
  await many.stop();
}
const last = startSleepers(10);
anchors.push(...doctorRuns());
await last.stop();
notes.push(loadNote());
holder.kill('SIGKILL');

const anchor = median(anchors.map((r) => r.ms));
const heavy = median(heavies.map((r) => r.ms));
const ratio = heavy / anchor;
const cpuRatio = median(heavies.map((r) => r.cpuMs)) / median(anchors.map((r) => r.cpuMs));
report([
  ['machine', notes.join(' | ')],
  [`doctor --json, 10 extra processes (median of ${anchors.length})`, `${anchor.toFixed(0)} ms wall, ${median(anchors.map((r) => r.cpuMs)).toFixed(0)} ms CPU`],
  [`doctor --json, ${MANY} extra processes (median of ${heavies.length})`, `${heavy.toFixed(0)} ms wall, ${median(heavies.map((r) => r.cpuMs)).toFixed(0)} ms CPU`],
  ['ratio', `${ratio.toFixed(2)}x wall (target <= 1.2x), ${cpuRatio.toFixed(2)}x CPU`],
  ['process list in-process, 10 extra', `${stalls.few.ms.toFixed(0)} ms for ${stalls.few.n} processes, longest event-loop stall ${stalls.few.maxStallMs.toFixed(1)} ms`],
  [`process list in-process, ${MANY} extra`, `${stalls.many.ms.toFixed(0)} ms for ${stalls.many.n} processes, longest event-loop stall ${stalls.many.maxStallMs.toFixed(1)} ms`],
]);
process.exit(ratio <= 1.2 ? 0 : 1);
