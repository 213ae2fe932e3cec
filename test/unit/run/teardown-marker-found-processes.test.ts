import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { teardown } from '../../../src/run/teardown.js';
import { readRun } from '../../../src/run/state.js';
import { markedProcesses, markerFor, RUN_MARKER } from '../../../src/run/run-scan.js';
import type { StopSnapshot } from '../../../src/run/stop.js';
import { tempHome } from '../../helpers/cli.js';
import { deadPid, isAlive, killStarted, track, waitUntil, writeFakeRun } from '../../helpers/proc-trees.js';
import { readCmdline, readStartTicks } from '../../../src/run/proc.js';

// teardown of what only a run's marker ties to the run (no record names it): a helper a worker
// forks while it stops, a process that keeps respawning, one that is gone before teardown reaches
// it, one that leads a group holding a process that is not the run's. Every process here is started
// by the test and SIGKILLed after it (the marked ones found again by their marker).

const ID = '20261201-100000-000-agg';
// Long enough that a loaded machine never turns a SIGTERM into a SIGKILL (each process here ends within
// ms of its SIGTERM, so the tests take no longer for it).
const GRACE = 2000;
const homes: ReturnType<typeof tempHome>[] = [];
const markers: string[] = [];
const home = () => {
  const h = tempHome('dd-teardown-marked-');
  homes.push(h);
  markers.push(markerFor(h.stateDir, ID));
  return h;
};
afterEach(async () => {
  // Whatever of this test still carries one of its runs' markers (a respawned copy, a helper).
  for (const m of markers.splice(0)) for (const p of await markedProcesses(m, 0)) process.kill(p.pid, 'SIGKILL');
  killStarted();
});
afterAll(() => homes.forEach((h) => h.cleanup()));

/** bash running `script` in its own group with the run's marker, once it has created `armed` (and shows `argv0`). */
async function marked(stateDir: string, script: string, armed: string, argv0 = 'bash'): Promise<number> {
  const child = spawn('bash', ['-c', script], { detached: true, stdio: 'ignore', env: { ...process.env, [RUN_MARKER]: markerFor(stateDir, ID) } });
  track(child.pid!);
  child.unref();
  await waitUntil(() => existsSync(armed) && readCmdline(child.pid!).startsWith(argv0), `the marked ${argv0} to be ready`);
  return child.pid!;
}

/**
 * A keeper (not the run's: no marker, no record, its own group) that runs `command` with the run's
 * marker in a new session each time a line is written to DIR/ctl (and once at start when `now`).
 */
function startKeeper(dir: string, stateDir: string, command: string, now = false): void {
  const keeper = join(dir, 'keeper.sh');
  writeFileSync(keeper, [
    `mkfifo "${dir}/ctl"; exec 4<>"${dir}/ctl"`,
    `start() { ${RUN_MARKER}="$MARK" setsid bash -c '${command.replace(/'/g, "'\\''")}' & }`,
    now ? 'start' : '',
    'while read -u 4 l; do start; done',
  ].join('\n'));
  const k = spawn('bash', [keeper], { detached: true, stdio: 'ignore', env: { ...process.env, MARK: markerFor(stateDir, ID) } });
  track(k.pid!);
  k.unref();
}

describe('teardown of processes only the run marker names', () => {
  it('a marker-found process is shown in the live stop line, and only it is stopped, never the rest of its group', async () => {
    const { stateDir, dir } = home();
    await writeFakeRun(stateDir, { id: ID, supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
    // A helper leading its own group, with a member that is neither the run's (no marker) nor its child.
    const armed = join(dir, 'armed');
    const helper = await marked(stateDir, `( env -u ${RUN_MARKER} sleep 3000 & echo $! > '${dir}/member' ); touch '${armed}'; exec -a helper-daemon sleep 3000`, armed, 'helper-daemon');
    const member = await waitUntil(() => Number(readFileSync(join(dir, 'member'), 'utf8')), 'the member\'s pid');
    track(member);
    const states: StopSnapshot[] = [];
    const out = await teardown({ stateDir, graceMs: GRACE, orphans: false, onState: (_run, s) => states.push(s) });
    expect(out.stopped).toEqual([{ run: ID, name: 'helper-daemon', pid: helper, signal: 'SIGTERM', ms: expect.any(Number), note: 'found by its run marker' }]);
    expect(out.remaining).toEqual([]);
    expect(states.some((s) => s.targets.some((t) => t.name === 'helper-daemon'))).toBe(true);
    expect(isAlive(helper)).toBe(false);
    expect(isAlive(member)).toBe(true);
  });

  it('a marker-found process that is gone before teardown reaches it is not reported', async () => {
    const { stateDir, dir } = home();
    await writeFakeRun(stateDir, { id: ID, supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
    const armedA = join(dir, 'armed-a');
    const armedB = join(dir, 'armed-b');
    const stays = await marked(stateDir, `touch '${armedA}'; exec -a helper-daemon sleep 3000`, armedA, 'helper-daemon');
    const goes = await marked(stateDir, `touch '${armedB}'; exec -a short-lived sleep 3000`, armedB, 'short-lived');
    const out = await teardown({
      stateDir, graceMs: GRACE, orphans: false,
      // Between the plan (both seen alive) and the stop, one of them ends on its own.
      onPlan: () => {
        process.kill(goes, 'SIGKILL');
        const t0 = Date.now();
        while (isAlive(goes) && Date.now() - t0 < 2000); // the kernel ends it in microseconds; a zombie counts as gone
      },
    });
    expect(isAlive(goes)).toBe(false);
    expect(out.stopped.map((r) => [r.name, r.pid, r.signal])).toEqual([['helper-daemon', stays, 'SIGTERM']]);
    expect(out.remaining).toEqual([]);
  });

  it('a helper a worker starts out of its group while it stops is found by its marker and stopped in the next round', async () => {
    const { stateDir, dir } = home();
    const armed = join(dir, 'armed');
    // The worker, on SIGTERM, has a keeper (not the run's) start a helper with the run's marker in a
    // new session, waits until the helper runs, and exits: the helper is no descendant of the worker.
    startKeeper(dir, stateDir, `touch "${dir}/helper.$$"; exec -a helper-daemon sleep 3000`);
    const worker = await marked(stateDir, [
      "trap 'go=1' TERM",
      `mkfifo "${dir}/wait"; exec 3<>"${dir}/wait"; touch '${armed}'`,
      'while [ -z "${go:-}" ]; do read -t 0.05 -u 3 x; done',
      `echo more > "${dir}/ctl"`,
      `until h=$(compgen -G "${dir}/helper.*") && read -r -d '' c < "/proc/\${h##*.}/cmdline"; [ "\${c:-}" = helper-daemon ]; do read -t 0.01 -u 3 x; done`,
      'exit 0',
    ].join('\n'), armed);
    await writeFakeRun(stateDir, { id: ID, supervisor: { pid: deadPid(), startTicks: 1 }, processes: [{ name: 'agg-0', pid: worker, startTicks: readStartTicks(worker) }] });
    const progress: string[] = [];
    const out = await teardown({ stateDir, graceMs: GRACE, orphans: false, onProgress: (r) => progress.push(r.name) });
    const helper = out.stopped.find((r) => r.name === 'helper-daemon');
    // Told as it is done, like the first round's processes.
    expect(progress).toEqual(['agg-0', 'helper-daemon']);
    expect(helper).toMatchObject({ run: ID, signal: 'SIGTERM', note: 'found by its run marker' });
    expect(out.stopped.find((r) => r.name === 'agg-0')).toMatchObject({ pid: worker, signal: 'SIGTERM' });
    expect(out.remaining).toEqual([]);
    expect(isAlive(helper!.pid)).toBe(false);
    expect(await markedProcesses(markerFor(stateDir, ID), 0)).toEqual([]);
    expect((await readRun(stateDir, ID)).state).toBe('stopped');
  });

  it('a process that respawns itself on every SIGTERM: after three rounds teardown reports what is left and does not record the run stopped', async () => {
    const { stateDir, dir } = home();
    // Each copy, on SIGTERM, has the keeper start its successor and exits once that one is ready; the
    // successor is no descendant of the copy teardown stops, only its marker names it.
    const copy = join(dir, 'copy.sh');
    writeFileSync(copy, [
      "trap 'go=1' TERM",
      `mkfifo "${dir}/wait.$$"; exec 3<>"${dir}/wait.$$"`, // a builtin read on it waits without a child process
      `touch "${dir}/armed.$$"`,
      'while [ -z "${go:-}" ]; do read -t 0.05 -u 3 x; done',
      `n=$(ls "${dir}" | grep -c '^armed'); echo more > "${dir}/ctl"`,
      `while [ "$(ls "${dir}" | grep -c '^armed')" -le "$n" ]; do read -t 0.01 -u 3 x; done`,
      'exit 0',
    ].join('\n'));
    startKeeper(dir, stateDir, `exec bash "${copy}"`, true);
    const armed = () => readdirSync(dir).filter((f) => f.startsWith('armed.')).map((f) => Number(f.slice(6)));
    const [first] = await waitUntil(() => (armed().length === 1 ? armed() : null), 'the first copy to be ready');
    await writeFakeRun(stateDir, { id: ID, supervisor: { pid: deadPid(), startTicks: 1 }, processes: [{ name: 'agg-0', pid: first, startTicks: readStartTicks(first) }] });
    const out = await teardown({ stateDir, graceMs: GRACE, orphans: false });
    // Round 1 stopped the recorded copy, rounds 2 and 3 one copy each; the fourth is still there.
    expect(out.stopped.map((r) => [r.name, r.signal])).toEqual([['agg-0', 'SIGTERM'], ['bash', 'SIGTERM'], ['bash', 'SIGTERM']]);
    const left = await markedProcesses(markerFor(stateDir, ID), 0);
    // The copy left is the one armed copy teardown did not stop (not the highest pid: pids wrap).
    expect(left.map((p) => p.pid)).toEqual(armed().filter((pid) => !out.stopped.some((r) => r.pid === pid)));
    expect(out.remaining).toEqual([{ run: ID, name: 'bash', pid: left[0].pid, cmd: expect.stringContaining('copy.sh') }]);
    const rec = await readRun(stateDir, ID);
    expect(rec.state).toBe('ready');
    expect(rec.processes[0].state).toBe('stopped');
  });
});
