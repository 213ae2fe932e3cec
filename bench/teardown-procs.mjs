// `teardown --json` of three process trees that take a second to shut down after SIGTERM (as vLLM
// does), on a machine with 3,000 unrelated processes against the same machine with 10.
// Target: wall <= 1.5x and CPU <= 2x the anchor: the stop loop's ticks look at the run's own
// processes, not at every process of the machine. Blocks 10 / 3,000 / 10 / 3,000 / 10. The
// record's supervisor (gone, as after `up --detach` ended) started with the first tree, so the run
// marker is looked for only in processes started since, as for a real run.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, ROOT, loadNote, median, report, startSleepers, timeCpu, treesRunRecord } from './lib.mjs';

const { descendants, readStartTicks } = await import(join(ROOT, 'dist', 'run', 'proc.js'));
const { writeRun } = await import(join(ROOT, 'dist', 'run', 'state.js'));
const { markerFor, RUN_MARKER } = await import(join(ROOT, 'dist', 'run', 'run-scan.js'));

const N = Number(process.env.DD_BENCH_RUNS ?? 3);
const MANY = 3000;
// Leader and engine both take 1 s to leave after SIGTERM (the trap's sleep is a new group member).
const SLOW = 'trap "sleep 1; exit 0" TERM';
const script = `${SLOW}; (exec -a VLLM::EngineCore bash -c '${SLOW}; sleep 3000 & wait') & wait`;
const started = new Set();
process.once('exit', () => { for (const pid of started) try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ } });

// Each tree carries its run's marker, as every process `up` starts does: teardown signals no recorded pid without it.
async function tree(marker) {
  const child = spawn('bash', ['-c', script], { detached: true, stdio: 'ignore', env: { ...process.env, [RUN_MARKER]: marker } });
  child.unref();
  started.add(child.pid);
  for (let i = 0; i < 500; i++) {
    const d = descendants(child.pid);
    if (d.some((x) => x.cmd.startsWith('VLLM::EngineCore')) && d.length >= 2) return { pid: child.pid, startTicks: readStartTicks(child.pid), descendants: d };
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('tree did not start');
}

async function teardownOnce(i) {
  const dir = mkdtempSync(join(tmpdir(), 'dd-bench-tdp-'));
  const stateDir = join(dir, 'state');
  mkdirSync(stateDir, { mode: 0o700 });
  const id = `bench-${i}`;
  const marker = markerFor(stateDir, id);
  const trees = await Promise.all([tree(marker), tree(marker), tree(marker)]);
  await writeRun(stateDir, treesRunRecord(stateDir, id, trees, Math.min(...trees.map((t) => t.startTicks))));
  const prof = process.env.DD_BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.DD_BENCH_PROF}`] : [];
  const wrap = process.env.DD_BENCH_STRACE ? ['strace', '-f', '-o', process.env.DD_BENCH_STRACE, '-e', 'trace=openat,statx,newfstatat,stat', process.execPath] : [process.execPath];
  const r = timeCpu(wrap[0], [...wrap.slice(1), ...prof, BIN, 'teardown', '--json'], { ...process.env, DYNAMO_DEV_HOME: stateDir });
  const doc = JSON.parse(r.stdout);
  if (r.status !== 0 || doc.remaining.length > 0 || doc.stopped.some((s) => s.signal !== 'SIGTERM')) {
    throw new Error(`teardown did not stop the trees cleanly: ${r.stdout} ${r.stderr}`);
  }
  for (const t of trees) started.delete(t.pid);
  rmSync(dir, { recursive: true, force: true });
  return r;
}

const runs = async (base) => {
  const out = [];
  for (let i = 0; i < N; i++) out.push(await teardownOnce(base + i));
  return out;
};

if (process.env.DD_BENCH_PROF || process.env.DD_BENCH_STRACE) {
  // One profiled teardown with MANY extra processes (node --cpu-prof into that folder), nothing else.
  const many = startSleepers(MANY);
  const r = await teardownOnce(0);
  await many.stop();
  console.log(`${r.ms.toFixed(0)} ms wall, ${r.cpuMs} ms CPU; profile in ${process.env.DD_BENCH_PROF}`);
  process.exit(0);
}

const notes = [loadNote()];
const anchors = [];
const heavies = [];
for (let round = 0; round < 2; round++) {
  const few = startSleepers(10);
  anchors.push(...await runs(round * 100));
  await few.stop();
  const many = startSleepers(MANY);
  notes.push(loadNote());
  heavies.push(...await runs(round * 100 + 50));
  await many.stop();
}
const last = startSleepers(10);
anchors.push(...await runs(300));
await last.stop();
notes.push(loadNote());

const wall = (xs) => median(xs.map((r) => r.ms));
const cpu = (xs) => median(xs.map((r) => r.cpuMs));
const ratio = wall(heavies) / wall(anchors);
const cpuRatio = cpu(heavies) / cpu(anchors);
report([
  ['machine', notes.join(' | ')],
  [`teardown --json of 3 slow trees, 10 extra processes (median of ${anchors.length})`, `${wall(anchors).toFixed(0)} ms wall, ${cpu(anchors).toFixed(0)} ms CPU`],
  [`teardown --json of 3 slow trees, ${MANY} extra processes (median of ${heavies.length})`, `${wall(heavies).toFixed(0)} ms wall, ${cpu(heavies).toFixed(0)} ms CPU`],
  ['ratio', `${ratio.toFixed(2)}x wall (target <= 1.5x), ${cpuRatio.toFixed(2)}x CPU (target <= 2x)`],
]);
process.exit(ratio <= 1.5 && cpuRatio <= 2 ? 0 : 1);
