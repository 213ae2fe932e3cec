// `doctor` with the fakes: under 1 s wall, and not much slower than its slowest check
// (checks run concurrently; heavy modules load lazily).
import { BIN, fakeEnv, median, report, timeRun } from './lib.mjs';

const env = fakeEnv();
const N = 7;
const wall = [];
const slowest = [];
for (let i = 0; i < N; i++) {
  const r = timeRun(process.execPath, [BIN, 'doctor', '--json'], env);
  const doc = JSON.parse(r.stdout);
  wall.push(r.ms);
  slowest.push(Math.max(...doc.checks.map((c) => c.durationMs)));
}
const nodeMs = median(Array.from({ length: 5 }, () => timeRun(process.execPath, ['-e', '0']).ms));
const w = median(wall);
const s = median(slowest);
report([
  ['doctor --json wall (median)', `${w.toFixed(0)} ms (target < 1000 ms)`],
  ['slowest check inside it (median)', `${s.toFixed(0)} ms`],
  ['node start-up', `${nodeMs.toFixed(0)} ms`],
  ['overhead beyond node + slowest check', `${(w - nodeMs - s).toFixed(0)} ms`],
]);
process.exit(w < 1000 ? 0 : 1);
