// teardown of three process trees that honour SIGTERM (leader + VLLM::EngineCore child each,
// detached like the supervisor spawns them): target under 1 s for the whole CLI call.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, FIXTURES, ROOT, median, report, timeRun, treesRunRecord } from './lib.mjs';

const { descendants, readStartTicks } = await import(join(ROOT, 'dist', 'run', 'proc.js'));
const { writeRun } = await import(join(ROOT, 'dist', 'run', 'state.js'));
const { markerFor, RUN_MARKER } = await import(join(ROOT, 'dist', 'run', 'run-scan.js'));

// Each tree carries its run's marker, as every process `up` starts does: teardown signals no recorded pid without it.
async function tree(marker) {
  const child = spawn('bash', [join(FIXTURES, 'proc-trees', 'tree.sh'), 'honour'], { detached: true, stdio: 'ignore', env: { ...process.env, [RUN_MARKER]: marker } });
  child.unref();
  const pid = child.pid;
  for (let i = 0; i < 500; i++) {
    const d = descendants(pid);
    if (d.some((x) => x.cmd.startsWith('VLLM::EngineCore'))) return { pid, startTicks: readStartTicks(pid), descendants: d };
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('tree did not start');
}

const rounds = 5;
const ms = [];
for (let round = 0; round < rounds; round++) {
  const dir = mkdtempSync(join(tmpdir(), 'dd-bench-td-'));
  const stateDir = join(dir, 'state');
  mkdirSync(stateDir, { mode: 0o700 });
  const id = `bench-${round}`;
  const marker = markerFor(stateDir, id);
  const trees = await Promise.all([tree(marker), tree(marker), tree(marker)]);
  await writeRun(stateDir, treesRunRecord(stateDir, id, trees));
  const r = timeRun(process.execPath, [BIN, 'teardown', '--json'], { ...process.env, DYNAMO_DEV_HOME: stateDir });
  const doc = JSON.parse(r.stdout);
  if (r.status !== 0 || doc.remaining.length > 0) {
    console.error('teardown left processes behind', r.stdout, r.stderr);
    for (const t of trees) try { process.kill(-t.pid, 'SIGKILL'); } catch {}
    process.exit(1);
  }
  ms.push(r.ms);
  rmSync(dir, { recursive: true, force: true });
}
const m = median(ms);
report([
  ['teardown of 3 trees, whole CLI call (median)', `${m.toFixed(0)} ms (target < 1000 ms)`],
  ['slowest of 5', `${Math.max(...ms).toFixed(0)} ms`],
]);
process.exit(m < 1000 ? 0 : 1);
