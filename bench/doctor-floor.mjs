// `doctor --json` against its floor: bench/floor_check.py, a stdlib Python checker of the facts
// Dynamo's own checker (deploy/sanity_check.py) and doctor both report (nvidia-smi query, driver
// CUDA version, imports). Same fake machine, alternating pairs. Target: doctor's median wall time
// <= the floor's (ratio <= 1.0x) while it checks far more; CPU is reported beside it.
import { join } from 'node:path';
import { BIN, ROOT, alternate, fakeEnv, loadNote, median, report, timeCpu } from './lib.mjs';

const N = Number(process.env.DD_BENCH_PAIRS ?? 11);
const env = fakeEnv();
const before = loadNote();
const run = (cmd, args) => {
  const r = timeCpu(cmd, args, env);
  if (!r.stdout.trim().startsWith('{')) throw new Error(`${args.join(' ')} printed no JSON: ${r.stderr}`);
  return r;
};
// One warm-up of each (page cache, pyc of the fakes).
run(process.execPath, [BIN, 'doctor', '--json']);
run('python3', [join(ROOT, 'bench', 'floor_check.py')]);
const [floor, doctor] = alternate(N,
  () => run('python3', [join(ROOT, 'bench', 'floor_check.py')]),
  () => run(process.execPath, [BIN, 'doctor', '--json']));
const checks = JSON.parse(doctor[0].stdout).checks.length;
const fw = median(floor.map((r) => r.ms));
const dw = median(doctor.map((r) => r.ms));
const fc = median(floor.map((r) => r.cpuMs));
const dc = median(doctor.map((r) => r.cpuMs));
const ratio = dw / fw;
report([
  ['machine', `${before} (before); ${loadNote()} (after)`],
  [`floor_check.py (median of ${N})`, `${fw.toFixed(0)} ms wall, ${fc.toFixed(0)} ms CPU`],
  [`doctor --json, ${checks} checks (median of ${N})`, `${dw.toFixed(0)} ms wall, ${dc.toFixed(0)} ms CPU`],
  ['ratio doctor / floor', `${ratio.toFixed(2)}x wall (target <= 1.0x), ${(dc / fc).toFixed(2)}x CPU`],
]);
process.exit(ratio <= 1.0 ? 0 : 1);
